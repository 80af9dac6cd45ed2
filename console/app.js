// The web console's entry point: the login form, the session (who is logged in, with which
// grants) and the router. Pages are named in the URL fragment (#/topics/default/orders), which
// browsers never send to the server, so no topic or group name reaches an access log.

import { api, forgetCredentials, saveCredentials, savedCredentials } from './api.js';
import { browsePage, groupPage, groupsPage, h, overviewPage, topicPage, topicsPage, usersPage } from './pages.js';

const main = document.getElementById('main');
const loginForm = document.getElementById('login');
const bar = document.getElementById('bar');
let session = null;
let poller = null;

function segments() {
  return location.hash.replace(/^#\/?/, '').split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
}

async function route() {
  if (poller !== null) clearInterval(poller);
  poller = null;
  if (session === null) return;
  const [page = 'overview', ...rest] = segments();
  for (const a of bar.querySelectorAll('nav a')) a.classList.toggle('active', a.getAttribute('href') === `#/${page === 'topics' && rest.length > 0 ? 'topics' : page}`);
  main.setAttribute('data-page', 'loading');
  try {
    if (page === 'topics' && rest.length >= 2) await topicPage(main, session, rest[0], rest.slice(1).join('/'));
    else if (page === 'topics') await topicsPage(main, session);
    else if (page === 'browse') await browsePage(main, session, rest[0], rest.length > 1 ? rest.slice(1).join('/') : undefined);
    else if (page === 'groups' && rest.length > 0) await groupPage(main, session, ['groups', ...rest].map(encodeURIComponent).join('/'));
    else if (page === 'groups') await groupsPage(main, session);
    else if (page === 'users') await usersPage(main, session);
    else poller = await overviewPage(main, session);
    main.setAttribute('data-page', page);
  } catch (err) {
    if (err.status === 401) return logout(err.message);
    main.replaceChildren(h('h1', {}, 'Error'), h('p', { class: 'error', role: 'alert' }, `${err.code ?? 'error'}: ${err.message}`));
    main.setAttribute('data-page', 'error');
  }
}

function logout(message = '') {
  forgetCredentials();
  session = null;
  bar.hidden = true;
  main.replaceChildren(loginForm);
  main.setAttribute('data-page', 'login');
  document.getElementById('login-error').textContent = message;
}

async function start() {
  const { user } = await api('GET', 'whoami');
  session = { user };
  document.getElementById('who').textContent = user.username;
  bar.hidden = false;
  await route();
}

loginForm.addEventListener('submit', (e) => {
  e.preventDefault();
  saveCredentials(document.getElementById('login-user').value, document.getElementById('login-password').value);
  document.getElementById('login-password').value = '';
  start().catch((err) => logout(err.message));
});
document.getElementById('logout').addEventListener('click', () => logout());
window.addEventListener('hashchange', () => route());

if (savedCredentials() !== null) start().catch((err) => logout(err.message));
else main.setAttribute('data-page', 'login');
