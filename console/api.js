// The admin API client of the web console: every request carries the credentials the user logged
// in with (HTTP Basic), kept in sessionStorage for this tab only; no cookies, no query strings.

const storageKey = 'quartet.credentials';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function savedCredentials() {
  return sessionStorage.getItem(storageKey);
}

export function saveCredentials(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  sessionStorage.setItem(storageKey, btoa(binary));
}

export function forgetCredentials() {
  sessionStorage.removeItem(storageKey);
}

/** Percent-encodes each path segment. */
export function path(...segments) {
  return segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** Calls /api/v1/<route>; resolves the JSON body, rejects an ApiError. */
export async function api(method, route, body) {
  const headers = { Accept: 'application/json' };
  const credentials = savedCredentials();
  if (credentials !== null) headers.Authorization = `Basic ${credentials}`;
  const init = { method, headers, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined || method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(`/api/v1/${route}`, init);
  const text = await res.text();
  let json = {};
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'bad_reply', `the server answered ${res.status} with no JSON`);
  }
  if (!res.ok) throw new ApiError(res.status, json.error?.code ?? 'error', json.error?.message ?? `HTTP ${res.status}`);
  return json;
}
