/*
 * The console's core script: signs in with the client-credentials grant, keeps the token in sessionStorage
 * (signing out on a 401), calls /admin/v1, shows the API's {"errorCode","errorMsg"} on the page and routes
 * #/<page> to the page functions of console-pages.js.
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};
  const SESSION_KEY = 'gatehouse.console.session';
  const TIMEOUT_MS = 15000;

  // ---------------------------------------------------------------- DOM helpers (elements and text nodes only: no HTML is ever parsed from a string)

  /** An element with attributes (`on<event>` for listeners) and children (strings become text). */
  function h(tag, attributes, ...children) {
    const svg = ['svg', 'polyline', 'line', 'text', 'g', 'rect', 'title', 'circle'].includes(tag);
    const element = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
      else if (key === 'class') element.setAttribute('class', value);
      else if (value === true) element.setAttribute(key, '');
      else element.setAttribute(key, String(value));
    }
    append(element, children);
    return element;
  }
  function append(element, children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      element.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return element;
  }
  function clear(element) { while (element.firstChild) element.removeChild(element.firstChild); return element; }
  const $ = (id) => document.getElementById(id);

  /** A date-time for people, in the browser's zone; '—' for none. */
  function when(ms) {
    if (!ms) return '—';
    const date = new Date(Number(ms));
    return date.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  /** A table that becomes stacked cards on a phone: `columns` [{label, cell(row) -> node|text, class}]. */
  function table(caption, columns, rows, options) {
    const headRow = h('tr', {}, columns.map((column) => h('th', { scope: 'col' }, column.label)));
    const body = h('tbody', {}, rows.map((row) => h('tr', (options && options.rowAttributes) ? options.rowAttributes(row) : {},
      // One wrapper per cell: on a phone the cell is a two-column grid (label, value), whatever the value holds.
      columns.map((column) => h('td', { 'data-label': column.label, class: column.class }, h('div', {}, column.cell(row)))))));
    return h('div', { class: 'table-wrap' }, h('table', { class: 'cards' }, h('caption', {}, caption), h('thead', {}, headRow), body));
  }

  function empty(text) { return h('p', { class: 'empty' }, text); }
  /** Previous and next buttons over a stack of cursors (one per page shown so far, `undefined` for the first):
      `next` is the page's `next` cursor, `load` shows the page on top of the stack; ids are `<prefix>-previous`
      and `<prefix>-next`. */
  function pager(cursors, next, load, prefix) {
    const previousButton = h('button', { type: 'button', class: 'button', id: prefix + '-previous', disabled: cursors.length === 1 }, '← Previous page');
    const nextButton = h('button', { type: 'button', class: 'button', id: prefix + '-next', disabled: !next }, 'Next page →');
    previousButton.addEventListener('click', () => { cursors.pop(); attempt(load); });
    nextButton.addEventListener('click', () => { cursors.push(next); attempt(load); });
    return h('div', { class: 'pager' }, previousButton, h('span', { class: 'muted' }, 'Page ' + cursors.length), nextButton);
  }
  function badge(text, kind) { return h('span', { class: 'badge ' + (kind || text) }, text); }

  /** A button that asks again before a destructive action: the first press arms it, the second runs it. */
  function confirmButton(label, confirmLabel, action, attributes) {
    let armed = false;
    let timer = null;
    const button = h('button', Object.assign({ type: 'button', class: 'button danger' }, attributes || {}), label);
    const name = button.getAttribute('aria-label');
    const disarm = () => {
      armed = false;
      button.textContent = label;
      button.classList.remove('confirm');
      if (name) button.setAttribute('aria-label', name);
    };
    button.addEventListener('click', async () => {
      if (!armed) {
        armed = true;
        button.textContent = confirmLabel;
        button.classList.add('confirm');
        // The new name is what a screen reader reads for the focused button.
        if (name) button.setAttribute('aria-label', confirmLabel + ': ' + name);
        timer = setTimeout(disarm, 6000);
        return;
      }
      clearTimeout(timer);
      button.disabled = true;
      try { await action(); } finally { button.disabled = false; disarm(); }
    });
    button.addEventListener('blur', () => { if (armed) { clearTimeout(timer); disarm(); } });
    return button;
  }

  // ---------------------------------------------------------------- messages

  function showError(error) {
    const box = $('error');
    clear(box);
    if (!error) { box.hidden = true; return; }
    const code = error.code || 'ERROR';
    append(box, [h('strong', {}, code), error.message || String(error)]);
    if (error.body && Array.isArray(error.body.errors) && error.body.errors.length) {
      append(box, h('ul', { class: 'problems' }, error.body.errors.map(problemItem)));
    }
    box.hidden = false;
  }
  function problemItem(problem) {
    return h('li', {}, h('code', {}, problem.key || '(policy)'), ' in ', problem.file || 'the policy', ': ', problem.problem || '');
  }
  function notify(text) {
    const box = $('notice');
    box.textContent = text || '';
    box.hidden = !text;
  }
  function clearMessages() { showError(null); notify(''); }
  /** Goes to another page, showing `text` there (a page change clears the messages of the page left). */
  let carried = null;
  function navigate(hash, text) {
    if (location.hash === hash) { notify(text); render(); return; }
    carried = text;
    location.hash = hash;
  }

  // ---------------------------------------------------------------- session

  function loadSession() {
    try {
      const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
      if (session && session.token && session.expiresAt > Date.now()) return session;
    } catch (_) { /* a damaged entry: sign in again */ }
    sessionStorage.removeItem(SESSION_KEY);
    return null;
  }
  GC.session = loadSession();
  GC.canWrite = () => !!GC.session && GC.session.scope.split(' ').includes('gatehouse.admin');

  /** HTTP Basic for a confidential client: id and secret form-encoded first (RFC 6749 §2.3.1), UTF-8. */
  function basic(id, secret) {
    const encode = (text) => encodeURIComponent(text).replace(/%20/g, '+');
    const bytes = new TextEncoder().encode(encode(id) + ':' + encode(secret));
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return 'Basic ' + btoa(binary);
  }

  async function fetchBounded(url, init) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    try {
      return await fetch(url, Object.assign({ cache: 'no-store', credentials: 'omit', signal: controller.signal }, init));
    } catch (error) {
      throw new ApiError(0, 'NETWORK', error && error.name === 'AbortError'
        ? 'Gatehouse did not answer within ' + (TIMEOUT_MS / 1000) + ' s.' : 'Gatehouse could not be reached.');
    } finally {
      clearTimeout(timer);
    }
  }

  async function readJSON(response) {
    const text = await response.text();
    if (!text) return null;
    try { return JSON.parse(text); } catch (_) { return null; }
  }

  async function signIn(id, secret, scope) {
    const response = await fetchBounded('/mfp/api/az/v1/token', {
      method: 'POST',
      headers: { 'Authorization': basic(id, secret), 'Content-Type': 'application/x-www-form-urlencoded', 'Accept': 'application/json' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: scope }).toString(),
    });
    const data = await readJSON(response);
    if (!response.ok || !data || !data.access_token) {
      const refused = data && (data.error === 'invalid_client' || response.status === 401);
      throw new ApiError(response.status, (data && (data.error || data.errorCode)) || 'SIGN_IN_FAILED',
        refused ? 'The client id or secret is wrong (or the account is locked for a while after too many tries).'
          : (data && (data.error_description || data.errorMsg)) || 'Gatehouse refused the sign-in (' + response.status + ').');
    }
    GC.session = {
      token: data.access_token, client: id, scope: data.scope || scope,
      expiresAt: Date.now() + Math.max(Number(data.expires_in) || 0, 10) * 1000 - 5000,
    };
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(GC.session));
  }

  function signOut(reason) {
    GC.session = null;
    sessionStorage.removeItem(SESSION_KEY);
    GC.stopTimers();
    showSignedOut();
    if (reason) notify(reason);
  }

  // ---------------------------------------------------------------- the admin API

  class ApiError extends Error {
    constructor(status, code, message, body) { super(message); this.status = status; this.code = code; this.body = body; }
  }

  /** The error of a call that signed the console out: the sign-in page says why, no error box. */
  function signedOutError(code, message) {
    const error = new ApiError(401, code, message);
    error.signedOut = true;
    return error;
  }

  /** Calls `/admin/v1<path>`; throws an ApiError carrying the answer's errorCode and errorMsg. A 401 signs out. */
  async function api(method, path, options) {
    options = options || {};
    if (!GC.session || GC.session.expiresAt <= Date.now()) {
      signOut('Your session ended; sign in again.');
      throw signedOutError('SESSION_ENDED', 'Your session ended; sign in again.');
    }
    let url = '/admin/v1' + path;
    if (options.query) {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(options.query)) if (value !== undefined && value !== null && value !== '') query.set(key, value);
      const text = query.toString();
      if (text) url += '?' + text;
    }
    const headers = { 'Authorization': 'Bearer ' + GC.session.token, 'Accept': 'application/json' };
    if (options.body !== undefined) headers['Content-Type'] = options.contentType || 'application/json';
    const response = await fetchBounded(url, { method: method, headers: headers, body: options.body });
    const data = await readJSON(response);
    if (response.status === 401) {
      signOut('Gatehouse refused the session (401): sign in again.');
      throw signedOutError((data && data.errorCode) || 'UNAUTHORIZED', (data && data.errorMsg) || 'Signed out.');
    }
    if (!response.ok) {
      throw new ApiError(response.status, (data && data.errorCode) || ('HTTP_' + response.status),
        (data && data.errorMsg) || ('Gatehouse answered ' + response.status + '.'), data);
    }
    return data;
  }

  /** Runs an action, showing its error (or clearing the old one) on the page. Returns whether it worked. */
  async function attempt(action) {
    try {
      showError(null);
      await action();
      return true;
    } catch (error) {
      if (!error.signedOut) showError(error);
      return false;
    }
  }

  // ---------------------------------------------------------------- routing

  const timers = new Set();
  GC.every = (ms, work) => { const id = setInterval(work, ms); timers.add(id); return id; };
  GC.stopTimers = () => { for (const id of timers) clearInterval(id); timers.clear(); };
  let renderCount = 0;

  function route() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [name, ...rest] = hash.split('/');
    return { name: name || 'dashboard', argument: rest.length ? decodeURIComponent(rest.join('/')) : undefined };
  }

  async function render() {
    if (!GC.session) { showSignedOut(); return; }
    showSignedIn();
    GC.stopTimers();
    const current = route();
    const page = GC.pages[current.name] ? current.name : 'dashboard';
    for (const link of document.querySelectorAll('#nav a')) {
      const active = link.dataset.page === ({ client: 'registrations', device: 'devices', user: 'users' }[page] || page);
      if (active) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
    }
    const number = ++renderCount;
    const container = clear($('page'));
    container.setAttribute('aria-busy', 'true');
    try {
      await GC.pages[page](container, current.argument, () => number === renderCount);
    } catch (error) {
      if (!error.signedOut) showError(error);
    } finally {
      container.removeAttribute('aria-busy');
    }
    const heading = container.querySelector('h1');
    if (heading && GC.focusHeading) { heading.setAttribute('tabindex', '-1'); heading.focus({ preventScroll: false }); }
    GC.focusHeading = true;
  }

  function showSignedOut() {
    $('signin').hidden = false;
    $('nav').hidden = true;
    $('who').hidden = true;
    clear($('page'));
    document.title = 'Sign in · Gatehouse console';
  }
  function showSignedIn() {
    $('signin').hidden = true;
    $('nav').hidden = false;
    $('who').hidden = false;
    $('who-name').textContent = GC.session.client + (GC.canWrite() ? '' : ' (read only)');
  }

  function start() {
    $('signin-form').addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = event.target;
      const id = form.elements.id.value.trim();
      const secret = form.elements.secret.value;
      if (!id || !secret) { showError(new ApiError(0, 'MISSING', 'Enter the client id and its secret.')); return; }
      const button = $('signin-submit');
      button.disabled = true;
      clearMessages();
      const ok = await attempt(() => signIn(id, secret, form.elements.scope.value));
      button.disabled = false;
      if (ok) {
        form.reset();
        if (!location.hash || location.hash === '#/' || location.hash === '#') location.hash = '#/dashboard';
        else render();
      }
    });
    $('sign-out').addEventListener('click', () => { clearMessages(); signOut('Signed out.'); $('signin-id').focus(); });
    window.addEventListener('hashchange', () => {
      clearMessages();
      if (carried) { notify(carried); carried = null; }
      render();
    });
    GC.focusHeading = false;
    render();
  }

  Object.assign(GC, { h, append, clear, $, when, table, empty, badge, pager, confirmButton, api, attempt, notify, navigate, showError,
                      problemItem, clearMessages, render, ApiError });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})();
