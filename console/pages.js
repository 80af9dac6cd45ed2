// The web console's pages, each a function that fills the main element from the admin API. Text
// always goes in through textContent (never as HTML), so nothing a record or a name holds can run.
// Write actions are shown only to users whose grants allow them; the API checks again anyway.

import { api, path } from './api.js';
import { drawChart } from './chart.js';

/** Builds an element: h('td', { class: 'num' }, 'text', childElement). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

function duration(ms) {
  const s = Math.floor(ms / 1000);
  const parts = [[Math.floor(s / 86400), 'd'], [Math.floor(s / 3600) % 24, 'h'], [Math.floor(s / 60) % 60, 'm'], [s % 60, 's']];
  return parts.filter(([v], i) => v > 0 || i === 3).map(([v, u]) => `${v}${u}`).join(' ');
}

function table(id, headings, rows) {
  return h('table', { id },
    h('thead', {}, h('tr', {}, headings.map((t) => h('th', { class: t.endsWith('#') ? 'num' : null }, t.replace(/#$/, ''))))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => (c instanceof Node && c.tagName === 'TD' ? c : h('td', { class: typeof c === 'number' ? 'num' : null }, c ?? '–')))))));
}

function errorLine(err) {
  return h('p', { class: 'error', role: 'alert' }, `${err.code ?? 'error'}: ${err.message}`);
}

/** The caller's global grant names ('manage_topics', ...); root has them all. */
export function may(session, grant) {
  return session.user.root || session.user.permissions.global.includes(grant);
}

// --- overview ------------------------------------------------------------------------------------

const samples = [];
const samplesMax = 60;

export async function overviewPage(main, session) {
  const o = await api('GET', 'overview');
  const msgChart = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const byteChart = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  msgChart.id = 'chart-messages';
  byteChart.id = 'chart-bytes';
  // Each figure with how to show it from an overview answer; refreshed at every poll.
  const figures = [
    ['uptime', (x) => duration(x.uptimeMs)], ['version', (x) => x.version], ['topics', (x) => String(x.topics)],
    ['partitions', (x) => String(x.partitions)], ['messages', (x) => String(x.messages)], ['on disk', (x) => bytes(x.sizeBytes)],
  ].map(([label, show]) => ({ value: h('b', {}, show(o)), label, show }));
  main.replaceChildren(
    h('h1', {}, 'Overview'),
    h('div', { class: 'stats', id: 'overview-stats' }, figures.map((f) => h('div', { class: 'stat' }, f.value, h('span', {}, f.label)))),
    h('h2', {}, 'Throughput'),
    h('div', { class: 'charts' }, msgChart, byteChart),
    h('h2', {}, 'Listeners'),
    table('listeners', ['listener', 'address'], o.listeners.map((l) => [l.name, l.address])),
    h('p', { class: 'muted' }, `Started ${o.startedAt}; signed in as ${session.user.username}.`),
  );
  const draw = () => {
    const rates = samples.slice(1).map((s, i) => ({ m: (s.messages - samples[i].messages) / ((s.at - samples[i].at) / 1000), b: (s.sizeBytes - samples[i].sizeBytes) / ((s.at - samples[i].at) / 1000) }));
    drawChart(msgChart, rates.map((r) => Math.max(0, r.m)), 'messages/s', (v) => v.toFixed(1));
    drawChart(byteChart, rates.map((r) => Math.max(0, r.b)), 'bytes/s', (v) => `${bytes(Math.round(v))}/s`);
  };
  const sample = (x) => {
    samples.push({ at: performance.now(), messages: x.messages, sizeBytes: x.sizeBytes });
    if (samples.length > samplesMax) samples.shift();
    for (const f of figures) f.value.textContent = f.show(x);
    draw();
  };
  sample(o);
  // Polls while this page is shown; the router stops it on leaving.
  return setInterval(() => api('GET', 'overview').then(sample, () => {}), 2000);
}

// --- topics --------------------------------------------------------------------------------------

function kafkaName(names) {
  return names.kafka ?? '–';
}

function iggyName(names) {
  return names.iggy ? `${names.iggy.stream}/${names.iggy.topic} (${names.iggy.streamId}/${names.iggy.topicId})` : '–';
}

export async function topicsPage(main, session) {
  const { topics } = await api('GET', 'topics');
  const rows = topics.map((t) => [
    h('td', {}, h('a', { href: `#/topics/${path(t.namespace, t.name)}` }, `${t.namespace}/${t.name}`)),
    t.partitions, t.messages, bytes(t.sizeBytes), kafkaName(t.names), iggyName(t.names), t.names.cursus ?? '–',
  ]);
  main.replaceChildren(
    h('h1', {}, 'Topics'),
    table('topics', ['topic', 'partitions#', 'messages#', 'size', 'Kafka', 'Iggy', 'Cursus'], rows),
    may(session, 'manage_topics') ? createTopicForm() : h('p', { class: 'muted', id: 'read-only' }, 'Read-only: you may not create or delete topics.'),
  );
}

function createTopicForm() {
  const name = h('input', { id: 'new-topic-name', required: true, placeholder: 'name' });
  const partitions = h('input', { id: 'new-topic-partitions', type: 'number', min: 1, value: 1 });
  const status = h('p', { role: 'status' });
  const form = h('form', { class: 'card inline', id: 'create-topic' },
    h('h2', {}, 'Create a topic'), h('label', {}, 'Name ', name), h('label', {}, 'Partitions ', partitions), h('button', { type: 'submit' }, 'Create'), status);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    api('POST', 'topics', { name: name.value, partitions: Number(partitions.value) })
      .then(() => { location.hash = `#/topics/${path('default', name.value)}`; })
      .catch((err) => status.replaceChildren(errorLine(err)));
  });
  return form;
}

export async function topicPage(main, session, ns, name) {
  const t = await api('GET', `topics/${path(ns, name)}`);
  const manage = may(session, 'manage_topics');
  const remove = h('button', { class: 'danger', id: 'delete-topic', type: 'button' }, 'Delete topic');
  remove.addEventListener('click', () => {
    if (!confirm(`Delete ${ns}/${name} and all its records?`)) return;
    api('DELETE', `topics/${path(ns, name)}`).then(() => { location.hash = '#/topics'; }, (err) => main.append(errorLine(err)));
  });
  main.replaceChildren(
    h('h1', {}, `Topic ${t.namespace}/${t.name}`),
    h('p', {}, h('a', { href: `#/browse/${path(ns, name)}` }, 'Browse messages')),
    h('h2', {}, 'Names under each protocol'),
    table('topic-names', ['protocol', 'name'], [
      ['Kafka', kafkaName(t.names)], ['Iggy', iggyName(t.names)], ['Cursus', t.names.cursus ?? '–'],
      ['Felix', t.names.felix ? `${t.names.felix.tenant}/${t.names.felix.namespace}/${t.names.felix.stream}` : '–'],
    ]),
    h('h2', {}, 'Partitions'),
    table('partitions', ['partition#', 'start offset#', 'end offset#', 'messages#', 'size', 'segments#'],
      t.partitionDetails.map((p) => [p.partition, p.startOffset, p.endOffset, p.messages, bytes(p.sizeBytes), p.segments])),
    h('h2', {}, 'Configuration'),
    table('config', ['key', 'value', 'source'], t.config.map((c) => [c.key, String(c.value), c.source])),
    manage ? h('p', {}, remove) : null,
  );
}

// --- message browser -----------------------------------------------------------------------------

function decode(b64) {
  if (b64 === null) return null;
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Bytes shown as text, indented JSON (text when not JSON) or hex. */
export function show(b64, format) {
  const raw = decode(b64);
  if (raw === null) return h('span', { class: 'muted' }, 'null');
  if (format === 'hex') return h('pre', {}, Array.from(raw, (b) => b.toString(16).padStart(2, '0')).join(' '));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(raw);
  if (format === 'json') {
    try {
      return h('pre', {}, JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      return h('pre', {}, text);
    }
  }
  return h('pre', {}, text);
}

export async function browsePage(main, _session, ns, name) {
  const { topics } = await api('GET', 'topics');
  const topicSelect = h('select', { id: 'browse-topic' }, topics.map((t) => h('option', { value: `${t.namespace}/${t.name}`, selected: t.namespace === ns && t.name === name }, `${t.namespace}/${t.name}`)));
  const partition = h('input', { id: 'browse-partition', type: 'number', min: 0, value: 0 });
  const mode = h('select', { id: 'browse-mode' }, h('option', { value: 'offset' }, 'from offset'), h('option', { value: 'time' }, 'from time'));
  const from = h('input', { id: 'browse-from', value: '0', placeholder: 'offset, or ISO time' });
  const format = h('select', { id: 'browse-format' }, ['text', 'json', 'hex'].map((f) => h('option', { value: f }, f)));
  const results = h('div', { id: 'browse-results' });
  const form = h('form', { class: 'card inline', id: 'browse' },
    h('label', {}, 'Topic ', topicSelect), h('label', {}, 'Partition ', partition), h('label', {}, 'Start ', mode), h('label', {}, 'At ', from),
    h('label', {}, 'Show as ', format), h('button', { type: 'submit' }, 'Read'));
  const read = async () => {
    const [tns, ...rest] = topicSelect.value.split('/');
    const base = `topics/${path(tns, rest.join('/'))}/partitions/${path(partition.value)}`;
    const route = mode.value === 'time' ? `${base}/records-at/${Date.parse(from.value)}` : `${base}/records/${path(from.value.trim())}`;
    try {
      const page = await api('GET', route);
      results.replaceChildren(
        h('p', { class: 'muted' }, `Offsets ${page.startOffset}–${page.endOffset}; ${page.records.length} record(s); next ${page.nextOffset}.`),
        table('records', ['offset#', 'timestamp', 'key', 'headers', 'value'], page.records.map((r) => [
          r.offset, r.timestamp, h('td', {}, show(r.key, format.value)),
          h('td', {}, r.headers.map((x) => h('div', {}, `${x.key}: `, show(x.value, format.value)))),
          h('td', {}, show(r.value, format.value)),
        ])),
      );
      if (page.nextOffset < page.endOffset) {
        results.append(h('button', { type: 'button', id: 'browse-next', onclick: () => { mode.value = 'offset'; from.value = String(page.nextOffset); read(); } }, 'Next page'));
      }
    } catch (err) {
      results.replaceChildren(errorLine(err));
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    read();
  });
  main.replaceChildren(h('h1', {}, 'Messages'), topics.length === 0 ? h('p', {}, 'No topics you may read.') : form, results);
  if (topics.length > 0 && ns !== undefined) await read();
}

// --- groups --------------------------------------------------------------------------------------

function groupRoute(g) {
  return g.protocol === 'iggy' ? `groups/iggy/${path(g.iggy.namespace, g.iggy.topic, g.group)}` : `groups/${g.protocol}/${path(g.group)}`;
}

export async function groupsPage(main) {
  const { groups } = await api('GET', 'groups');
  main.replaceChildren(
    h('h1', {}, 'Consumer groups'),
    table('groups', ['protocol', 'group', 'state', 'members#', 'topics', 'lag#'], groups.map((g) => [
      g.protocol, h('td', {}, h('a', { href: `#/${groupRoute(g)}` }, g.group)), g.state, g.members, g.topics.join(', '), g.lag,
    ])),
  );
}

export async function groupPage(main, _session, route) {
  const g = await api('GET', route);
  main.replaceChildren(
    h('h1', {}, `${g.protocol} group ${g.group}`),
    h('p', {}, `State ${g.state}; total lag ${g.lag}.`),
    h('h2', {}, 'Lag per partition'),
    table('group-offsets', ['topic', 'partition#', 'committed#', 'end offset#', 'lag#'], g.offsets.map((o) => [`${o.namespace}/${o.topic}`, o.partition, o.committed, o.endOffset, o.lag])),
    h('h2', {}, 'Members'),
    table('group-members', ['member', 'client', 'host'], g.members.map((m) => [m.memberId, m.clientId, m.clientHost])),
  );
}

// --- users and tokens ----------------------------------------------------------------------------

export async function usersPage(main, session) {
  const parts = [h('h1', {}, 'Users and tokens')];
  if (may(session, 'read_users')) {
    const { users } = await api('GET', 'users');
    parts.push(table('users', ['user', 'status', 'root', 'global permissions', 'created'], users.map((u) => [u.username, u.status, u.root ? 'yes' : 'no', u.permissions.global.join(', '), u.createdAt])));
  } else {
    parts.push(h('p', { class: 'muted' }, 'You may not list users (read_users).'));
  }
  const { tokens } = await api('GET', 'tokens');
  parts.push(h('h2', {}, 'Your personal access tokens'), table('tokens', ['name', 'created', 'expires'], tokens.map((t) => [t.name, t.createdAt, t.expiresAt ?? 'never'])));
  if (may(session, 'manage_users')) parts.push(createTokenForm());
  main.replaceChildren(...parts);
}

function createTokenForm() {
  const name = h('input', { id: 'new-token-name', required: true });
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card inline', id: 'create-token' }, h('h2', {}, 'Create a token'), h('label', {}, 'Name ', name), h('button', { type: 'submit' }, 'Create'), status);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    api('POST', 'tokens', { name: name.value }).then(
      (r) => status.replaceChildren(h('p', {}, 'Shown once, copy it now: '), h('pre', { id: 'new-token-secret' }, r.secret)),
      (err) => status.replaceChildren(errorLine(err)),
    );
  });
  return form;
}
