/*
 * One file on purpose (about 460 lines): the core pages (dashboard, registrations, client, accounts, keys, audit,
 * policy) share the local helpers of one closure (heading, read-only note, loading state); the later pages (devices,
 * users, applications) are files of their own, served joined to this one as console-pages.js (ConsoleAssets.swift).
 * The console's pages: each draws itself into the page region from the admin API (/admin/v1), with empty
 * states, paging by the API's next cursor, and the write actions only for a gatehouse.admin session.
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};
  const pages = GC.pages = {};

  function heading(container, text, description) {
    const h = GC.h;
    container.appendChild(h('h1', {}, text));
    if (description) container.appendChild(h('p', { class: 'muted' }, description));
    document.title = text + ' · Gatehouse console';
  }
  function readOnlyNote() {
    return GC.canWrite() ? null : GC.h('p', { class: 'muted' }, 'Read-only session: sign in with gatehouse.admin to change anything.');
  }
  function loading(container) {
    const note = GC.h('p', { class: 'muted', role: 'status' }, 'Loading…');
    container.appendChild(note);
    return note;
  }

  // ---------------------------------------------------------------- dashboard

  const RANGES = [
    { value: '3600:60', label: 'Last hour (per minute)' },
    { value: '21600:300', label: 'Last 6 hours (per 5 minutes)' },
    { value: '86400:900', label: 'Last 24 hours (per 15 minutes)' },
    { value: '604800:3600', label: 'Last 7 days (per hour)' },
  ];
  let dashboardRange = RANGES[0].value;

  pages.dashboard = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Dashboard', 'What Gatehouse did lately, from the audit log; refreshed every 10 seconds.');
    const stats = h('div', { class: 'stats', id: 'stats', 'aria-live': 'off' });
    const select = h('select', { id: 'range' }, RANGES.map((range) => h('option', { value: range.value, selected: range.value === dashboardRange }, range.label)));
    const chartBox = h('div', { id: 'chart-box' });
    const updated = h('p', { class: 'muted', id: 'updated' });
    container.append(stats, h('section', { class: 'card', 'aria-labelledby': 'chart-heading' },
      h('div', { class: 'chart-head' }, h('h2', { id: 'chart-heading' }, 'Flows, failures and blocks'),
        h('div', {}, h('label', { for: 'range', class: 'visually-hidden' }, 'Time range'), select)),
      chartBox), updated);

    let lastActivity = null;
    function drawChart() {
      if (!lastActivity) return;
      GC.clear(chartBox);
      const any = GC.chartSeries.some((series) => (lastActivity.totals || {})[series.event]);
      GC.append(chartBox, [GC.activityChart(lastActivity, chartBox.clientWidth), GC.chartLegend(lastActivity),
        any ? null : h('p', { class: 'muted' }, 'No flow, failure or block in this range yet.')]);
    }
    let drawnWidth = 0;
    const resized = () => {
      if (!current()) { window.removeEventListener('resize', resized); return; }
      if (Math.abs(chartBox.clientWidth - drawnWidth) > 8) { drawnWidth = chartBox.clientWidth; drawChart(); }
    };
    window.addEventListener('resize', resized);

    async function refresh() {
      const [span, bucket] = dashboardRange.split(':').map(Number);
      const since = Date.now() - span * 1000;
      const sinceMs = since - since % (bucket * 1000);
      const [activity, accounts, keys, registrations] = await Promise.all([
        GC.api('GET', '/activity', { query: { sinceMs: sinceMs, bucketSec: bucket } }),
        GC.api('GET', '/accounts', { query: { limit: 1000 } }),
        GC.api('GET', '/keys'),
        GC.api('GET', '/registrations', { query: { limit: 100 } }),   // a count up to 100, then "100+"
      ]);
      if (!current()) return;
      const totals = activity.totals || {};
      const count = (event) => String(totals[event] || 0);
      const stat = (value, label, kind, id) => h('div', { class: 'stat ' + (kind || ''), id: id }, h('span', { class: 'value' }, value), h('span', { class: 'label' }, label));
      GC.clear(stats);
      const registered = registrations.registrations.length + (registrations.next ? '+' : '');
      GC.append(stats, [
        stat(registered, 'clients registered', '', 'stat-registered'),
        stat(count('registration'), 'registrations in range', '', 'stat-registrations'),
        stat(count('token.issued'), 'flows (tokens issued)', 'flows', 'stat-flows'),
        stat(count('check.failure'), 'failures', 'failures', 'stat-failures'),
        stat(count('check.blocked'), 'blocks', 'blocks', 'stat-blocks'),
        stat(count('check.success'), 'check successes', '', 'stat-successes'),
        stat(String(accounts.accounts.length), 'accounts locked', accounts.accounts.length ? 'blocks' : '', 'stat-locked'),
        stat(String(keys.keys.filter((key) => !key.retiredAt).length), 'signing keys in use', '', 'stat-keys'),
      ]);
      lastActivity = activity;
      drawChart();
      updated.textContent = 'Updated ' + new Date().toLocaleTimeString() + '.';
    }
    select.addEventListener('change', () => { dashboardRange = select.value; GC.attempt(refresh); });
    loading(stats);
    await refresh();
    GC.every(10000, () => { if (current() && !document.hidden) GC.attempt(refresh); });
  };

  // ---------------------------------------------------------------- registrations

  let lastSearch = { application: '', device: '', user: '' };

  pages.registrations = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Registrations', 'Registered clients, by client id. Search by application, device or user (exact match).');
    const field = (name, label, hint) => h('div', { class: 'field' },
      h('label', { for: 'search-' + name }, label),
      h('input', { id: 'search-' + name, name: name, value: lastSearch[name], placeholder: hint, autocapitalize: 'none', spellcheck: 'false' }));
    const form = h('form', { class: 'card search', role: 'search', 'aria-label': 'Search registrations' },
      field('application', 'Application', 'com.example.app'), field('device', 'Device', 'device id'), field('user', 'User', 'user name'),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button primary', id: 'search-submit' }, 'Search'),
        h('button', { type: 'button', class: 'button', id: 'search-clear' }, 'Clear')));
    const results = h('div', { id: 'registrations' });
    container.append(form, results);
    let cursors = [undefined];

    async function load() {
      const after = cursors[cursors.length - 1];
      const page = await GC.api('GET', '/registrations', { query: Object.assign({ limit: 25, after: after }, lastSearch) });
      if (!current()) return;
      GC.clear(results);
      const filtered = Object.values(lastSearch).some(Boolean);
      if (!page.registrations.length) {
        results.appendChild(GC.empty(filtered ? 'No registration matches this search.' : 'No client has registered yet.'));
      } else {
        results.appendChild(GC.table('Page ' + cursors.length + ' of the registrations' + (filtered ? ' that match' : ''), [
          { label: 'Client id', class: 'id', cell: (r) => h('a', { href: '#/client/' + encodeURIComponent(r.clientId) }, r.clientId) },
          { label: 'Application', cell: (r) => r.application.id + ' (' + r.application.clientPlatform + (r.application.version ? ' ' + r.application.version : '') + ')' },
          { label: 'Device', cell: (r) => [r.device.id, r.device.deviceDisplayName || r.device.hardware ? h('br') : null,
            h('span', { class: 'muted' }, [r.device.deviceDisplayName, r.device.hardware, r.device.platform].filter(Boolean).join(' · '))] },
          { label: 'User', cell: (r) => r.user || h('span', { class: 'muted' }, 'none') },
          { label: 'Registered', cell: (r) => GC.when(r.createdAt) },
        ], page.registrations));
      }
      results.appendChild(GC.pager(cursors, page.next, load, 'page'));
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      lastSearch = { application: form.elements.application.value.trim(), device: form.elements.device.value.trim(), user: form.elements.user.value.trim() };
      cursors = [undefined];
      GC.attempt(load);
    });
    form.querySelector('#search-clear').addEventListener('click', () => {
      lastSearch = { application: '', device: '', user: '' };
      for (const name of ['application', 'device', 'user']) form.elements[name].value = '';
      cursors = [undefined];
      GC.attempt(load);
    });
    await load();
  };

  // ---------------------------------------------------------------- one client

  pages.client = async function (container, clientId, current) {
    const h = GC.h;
    heading(container, 'Client', null);
    container.querySelector('h1').appendChild(h('span', { class: 'mono muted' }, ' ' + (clientId || '')));
    if (!clientId) { container.appendChild(GC.empty('No client chosen: pick one in Registrations.')); return; }
    const body = h('div', { id: 'client' });
    container.appendChild(h('p', {}, h('a', { href: '#/registrations' }, '← Registrations')));
    container.appendChild(body);
    const path = '/registrations/' + encodeURIComponent(clientId);

    async function load() {
      const client = await GC.api('GET', path);
      if (!current()) return;
      GC.clear(body);
      const device = client.device;
      body.appendChild(h('section', { class: 'card', 'aria-labelledby': 'client-facts' }, h('h2', { id: 'client-facts' }, 'Registration'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'Client id'), h('dd', { class: 'mono', id: 'client-id' }, client.clientId),
          h('dt', {}, 'Application'), h('dd', {}, client.application.id + ' · ' + client.application.clientPlatform + (client.application.version ? ' · ' + client.application.version : '')),
          h('dt', {}, 'Device'), h('dd', {}, [device.id, device.deviceDisplayName, device.hardware, device.platform].filter(Boolean).join(' · ')),
          h('dt', {}, 'User'), h('dd', {}, client.user || 'none'),
          h('dt', {}, 'Registered'), h('dd', {}, GC.when(client.createdAt)),
          h('dt', {}, 'Updated'), h('dd', {}, GC.when(client.updatedAt)))));
      body.appendChild(h('h2', {}, 'Security checks'));
      if (!client.checks.length) {
        body.appendChild(GC.empty('The application of this client has no security check.'));
      } else {
        body.appendChild(GC.table('The state of each check of the application, never its data. Expired: no state in force (never started, or its time ran out).', [
          { label: 'Check', cell: (c) => h('strong', {}, c.check) },
          { label: 'State', cell: (c) => h('span', { 'data-check-state': c.check }, GC.badge(c.state)) },
          { label: 'Attempts left', cell: (c) => c.maxAttempts === undefined ? '—' : c.remainingAttempts + ' of ' + c.maxAttempts },
          { label: 'Expires', cell: (c) => c.expiresAt ? GC.when(c.expiresAt) : '—' },
          { label: 'Action', cell: (c) => {
            const label = c.state === 'blocked' ? 'Unblock' : 'Reset';
            const button = h('button', { type: 'button', class: 'button' + (c.state === 'blocked' ? ' primary' : ''), 'data-reset': c.check,
              disabled: !GC.canWrite(), 'aria-label': label + ' ' + c.check }, label);
            button.addEventListener('click', async () => {
              button.disabled = true;
              const ok = await GC.attempt(() => GC.api('POST', path + '/checks/' + encodeURIComponent(c.check) + '/reset'));
              if (ok) { await GC.attempt(load); GC.notify(c.check + ' was reset for this client: it starts anew, and the tokens it granted stop working.'); }
              else button.disabled = false;
            });
            return button;
          } },
        ], client.checks, { rowAttributes: (c) => ({ 'data-check': c.check }) }));
      }
      body.appendChild(h('h2', {}, 'Actions'));
      const revoke = h('button', { type: 'button', class: 'button', id: 'revoke', disabled: !GC.canWrite() }, 'Revoke its tokens');
      revoke.addEventListener('click', async () => {
        revoke.disabled = true;
        if (await GC.attempt(() => GC.api('POST', path + '/revoke'))) GC.notify('Every token this client was granted until now stops working.');
        revoke.disabled = !GC.canWrite();
      });
      const remove = GC.confirmButton('Delete the registration…', 'Press again to delete', async () => {
        if (await GC.attempt(() => GC.api('DELETE', path))) {
          GC.navigate('#/registrations', 'Registration ' + clientId + ' deleted: its tokens were revoked, and the app must register again.');
        }
      }, { id: 'delete', disabled: !GC.canWrite() });
      body.appendChild(h('div', { class: 'actions' }, revoke, remove));
      body.appendChild(h('p', { class: 'muted' }, 'Deleting removes the registration and all its state; its tokens are revoked first.'));
      const note = readOnlyNote();
      if (note) body.appendChild(note);
    }
    await load();
  };

  // ---------------------------------------------------------------- accounts

  pages.accounts = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Locked accounts', 'Users and confidential clients locked by too many wrong passwords or secrets. Unlocking forgets their failed logins.');
    const body = h('div', { id: 'accounts' });
    container.appendChild(body);
    async function load() {
      const answer = await GC.api('GET', '/accounts', { query: { limit: 1000 } });
      if (!current()) return;
      GC.clear(body);
      if (!answer.accounts.length) { body.appendChild(GC.empty('No account is locked.')); return; }
      body.appendChild(GC.table('Accounts locked now', [
        { label: 'Account', class: 'id', cell: (a) => a.account },
        { label: 'Failures', cell: (a) => String(a.failures) },
        { label: 'Lockouts', cell: (a) => String(a.lockouts) },
        { label: 'Locked until', cell: (a) => GC.when(a.lockedUntil) },
        { label: 'Action', cell: (a) => {
          const button = h('button', { type: 'button', class: 'button primary', 'data-unlock': a.account, disabled: !GC.canWrite(), 'aria-label': 'Unlock ' + a.account }, 'Unlock');
          button.addEventListener('click', async () => {
            button.disabled = true;
            if (await GC.attempt(() => GC.api('DELETE', '/accounts/' + encodeURIComponent(a.account)))) {
              await GC.attempt(load);
              GC.notify(a.account + ' is unlocked.');
            } else button.disabled = false;
          });
          return button;
        } },
      ], answer.accounts));
      const note = readOnlyNote();
      if (note) body.appendChild(note);
    }
    await load();
  };

  // ---------------------------------------------------------------- keys

  pages.keys = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Signing keys', 'The keys tokens are signed with (ES256), oldest first. Rotating makes a new key current on every node; retiring a key makes its tokens stop verifying.');
    const rotate = h('button', { type: 'button', class: 'button primary', id: 'rotate', disabled: !GC.canWrite() }, 'Rotate: make a new key');
    const body = h('div', { id: 'keys' });
    container.append(h('div', { class: 'actions' }, rotate), body);
    async function load() {
      const answer = await GC.api('GET', '/keys');
      if (!current()) return;
      GC.clear(body);
      if (!answer.keys.length) { body.appendChild(GC.empty('No signing key is stored yet.')); return; }
      body.appendChild(GC.table('Signing keys', [
        { label: 'Key id (kid)', class: 'id', cell: (k) => k.kid },
        { label: 'Algorithm', cell: (k) => k.algorithm },
        { label: 'Created', cell: (k) => GC.when(k.createdAt) },
        { label: 'State', cell: (k) => k.retiredAt ? [GC.badge('retired'), ' ', GC.when(k.retiredAt)] : k.current ? GC.badge('current') : GC.badge('valid') },
        { label: 'Action', cell: (k) => k.retiredAt || k.current ? h('span', { class: 'muted' }, k.current ? 'signs new tokens' : '—')
          : GC.confirmButton('Retire…', 'Press again to retire', async () => {
            if (await GC.attempt(() => GC.api('POST', '/keys/' + encodeURIComponent(k.kid) + '/retire'))) {
              await GC.attempt(load);
              GC.notify('Key ' + k.kid + ' is retired: tokens it signed no longer verify.');
            }
          }, { 'data-retire': k.kid, disabled: !GC.canWrite(), 'aria-label': 'Retire key ' + k.kid }) },
      ], answer.keys));
      const note = readOnlyNote();
      if (note) body.appendChild(note);
    }
    rotate.addEventListener('click', async () => {
      rotate.disabled = true;
      let kid = null;
      if (await GC.attempt(async () => { kid = (await GC.api('POST', '/keys')).kid; })) {
        await GC.attempt(load);
        GC.notify('New current key ' + kid + '. The previous keys still verify the tokens they signed until retired.');
      }
      rotate.disabled = !GC.canWrite();
    });
    await load();
  };

  // ---------------------------------------------------------------- audit trail

  pages.audit = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Audit trail', 'Every registration, check outcome, token, lockout and admin action, oldest first, 50 a page. Never a secret or a token.');
    const body = h('div', { id: 'audit' });
    container.appendChild(body);
    let cursors = [undefined];
    async function load() {
      const page = await GC.api('GET', '/audit', { query: { limit: 50, after: cursors[cursors.length - 1] } });
      if (!current()) return;
      GC.clear(body);
      if (!page.events.length) {
        body.appendChild(GC.empty(cursors.length === 1 ? 'The audit log is empty.' : 'No later event.'));
      } else {
        body.appendChild(GC.table('Events ' + page.events[0].id + ' to ' + page.events[page.events.length - 1].id, [
          { label: 'Time', cell: (e) => GC.when(e.time) },
          { label: 'Event', cell: (e) => h('code', {}, e.event) },
          { label: 'Client', class: 'id', cell: (e) => e.clientId ? h('a', { href: '#/client/' + encodeURIComponent(e.clientId) }, e.clientId) : '—' },
          { label: 'Details', cell: (e) => [e.application, e.check && 'check ' + e.check, e.user && 'user ' + e.user, e.actor && 'by ' + e.actor, e.detail]
            .filter(Boolean).join(' · ') || '—' },
          { label: 'From', cell: (e) => [e.address, e.node && 'node ' + e.node].filter(Boolean).join(' · ') || '—' },
        ], page.events));
      }
      const first = h('button', { type: 'button', class: 'button', id: 'audit-first', disabled: cursors.length === 1 }, '⇤ First page');
      const previous = h('button', { type: 'button', class: 'button', id: 'audit-previous', disabled: cursors.length === 1 }, '← Previous');
      const next = h('button', { type: 'button', class: 'button', id: 'audit-next', disabled: !page.next }, 'Next →');
      first.addEventListener('click', () => { cursors = [undefined]; GC.attempt(load); });
      previous.addEventListener('click', () => { cursors.pop(); GC.attempt(load); });
      next.addEventListener('click', () => { cursors.push(page.next); GC.attempt(load); });
      body.appendChild(h('div', { class: 'pager' }, h('div', { class: 'actions' }, first, previous), h('span', { class: 'muted' }, 'Page ' + cursors.length), next));
    }
    await load();
  };

  // ---------------------------------------------------------------- policy

  pages.policy = async function (container, _argument, current) {
    const h = GC.h;
    heading(container, 'Policy', 'The policy in force on this node, then an editor that validates a new one before applying it to every node.');
    const view = h('div', { id: 'policy-view' });
    const editor = h('section', { class: 'card', id: 'policy-editor', 'aria-labelledby': 'editor-heading' });
    container.append(view, editor);

    async function loadView() {
      const policy = await GC.api('GET', '/policy');
      if (!current()) return;
      GC.clear(view);
      view.appendChild(h('h2', {}, 'Applications'));
      if (!policy.applications.length) view.appendChild(GC.empty('The policy has no application.'));
      // One folding section per application (the first one open), so the editor below stays near on a phone.
      policy.applications.forEach((app, index) => {
        const mapping = Object.entries(app.scopeElementMapping || {});
        view.appendChild(h('details', { class: 'card app', open: index === 0, 'data-application': app.id + '/' + app.platform },
          h('summary', {}, h('strong', {}, app.id), ' ', h('span', { class: 'muted' }, app.platform + (app.version ? ' ' + app.version : '')
            + ' · ' + app.securityChecks.length + (app.securityChecks.length === 1 ? ' check' : ' checks'))),
          h('dl', { class: 'facts' },
            h('dt', {}, 'Scope elements'), h('dd', {}, mapping.length ? mapping.map(([scope, checks]) => scope + ' → ' + (checks || '(none)')).join('; ') : 'none (a scope names a check)'),
            h('dt', {}, 'Mandatory scope'), h('dd', {}, app.mandatoryScope || 'none'),
            h('dt', {}, 'Longest token'), h('dd', {}, app.maxTokenExpiration + ' s')),
          app.securityChecks.length ? GC.table('Security checks of ' + app.id + ' (' + app.platform + ')', [
            { label: 'Check', cell: (c) => h('strong', {}, c.name) },
            { label: 'Class', cell: (c) => c.class },
            { label: 'Max attempts', cell: (c) => h('span', { 'data-max-attempts': c.name }, c.maxAttempts === undefined ? '—' : String(c.maxAttempts)) },
            { label: 'Blocked for', cell: (c) => c.blockedStateExpirationSec === undefined ? '—' : c.blockedStateExpirationSec + ' s' },
            { label: 'Success lasts', cell: (c) => c.successStateExpirationSec === undefined ? '—' : c.successStateExpirationSec + ' s' },
          ], app.securityChecks) : GC.empty('No security check.')));
      });
      view.appendChild(h('h2', {}, 'Accounts and clients'));
      const lockout = policy.accountLockout;
      view.appendChild(h('section', { class: 'card' }, h('dl', { class: 'facts' },
        h('dt', {}, 'Account lockout'), h('dd', { id: 'lockout' }, lockout.threshold ? lockout.threshold + ' failures in ' + lockout.windowSec + ' s lock for ' + lockout.durationSec + ' s (×' + lockout.growth + ' each time, at most ' + lockout.maxDurationSec + ' s)' : 'off'),
        h('dt', {}, 'Registration throttle'), h('dd', {}, policy.registrationThrottle ? (policy.registrationThrottle.perAddress ? policy.registrationThrottle.perAddress + ' per address per ' + policy.registrationThrottle.windowSec + ' s' : 'off') : 'default'),
        h('dt', {}, 'Confidential clients'), h('dd', {}, policy.confidentialClients.length ? policy.confidentialClients.map((c) => c.id + ' (' + c.allowedScope + ')').join('; ') : 'none'),
        h('dt', {}, 'Users'), h('dd', {}, policy.users.length
          ? policy.users.flatMap((name, index) => [index ? ', ' : null, h('a', { href: '#/user/' + encodeURIComponent(name) }, name)])
          : 'none'))));
    }

    async function loadEditor() {
      GC.clear(editor);
      editor.appendChild(h('h2', { id: 'editor-heading' }, 'Edit the policy'));
      if (!GC.canWrite()) {
        editor.appendChild(h('p', { class: 'muted' }, 'Reading and changing the policy source needs a gatehouse.admin session (the source holds secrets\' hashes and check properties).'));
        return;
      }
      let source;
      try {
        source = await GC.api('GET', '/policy/source');
      } catch (error) {
        if (error.signedOut) return;
        editor.appendChild(h('p', { class: 'error', role: 'alert' }, h('strong', {}, error.code), error.message));
        return;
      }
      if (!current()) return;
      const textarea = h('textarea', { id: 'policy-yaml', name: 'yaml', spellcheck: 'false', autocapitalize: 'none', autocomplete: 'off',
        'aria-describedby': 'policy-help policy-keys policy-result', rows: 24 });
      textarea.value = source.yaml || '';
      const validate = h('button', { type: 'button', class: 'button', id: 'policy-validate' }, 'Validate');
      const apply = h('button', { type: 'button', class: 'button primary', id: 'policy-apply' }, 'Validate and apply');
      const reload = h('button', { type: 'button', class: 'button ghost', id: 'policy-reload' }, 'Start again from the policy in force');
      const result = h('div', { id: 'policy-result', 'aria-live': 'polite' });
      const help = h('p', { id: 'policy-help', class: 'muted' });
      const describe = (version, origin) => {
        help.textContent = 'Version ' + version + (origin ? ' (' + origin + ')' : '') + ' is in force. Changes are checked as a start'
          + ' would check them; nothing changes until a valid policy is applied, and then on every node sharing the store.';
      };
      describe(source.version, source.origin);
      editor.append(
        help,
        h('label', { for: 'policy-yaml' }, 'Policy (YAML)'),
        h('p', { id: 'policy-keys', class: 'muted' }, 'Tab indents by two spaces; press Escape, then Tab, to leave the editor.'), textarea,
        h('div', { class: 'actions' }, validate, apply, reload), result);
      textarea.addEventListener('keydown', (event) => {
        // Tab indents inside the editor; Escape then Tab leaves it (keyboard users are never trapped).
        if (event.key === 'Tab' && !event.shiftKey && !textarea.dataset.escaped) {
          event.preventDefault();
          const start = textarea.selectionStart;
          textarea.setRangeText('  ', start, textarea.selectionEnd, 'end');
        } else if (event.key === 'Escape') textarea.dataset.escaped = '1';
      });
      textarea.addEventListener('blur', () => { delete textarea.dataset.escaped; });

      function showVerdict(verdict, applied) {
        GC.clear(result);
        const errors = verdict.errors || [];
        const warnings = verdict.warnings || [];
        if (errors.length) {
          result.appendChild(h('div', { class: 'error', role: 'alert', id: 'policy-errors' }, h('strong', {}, 'Not valid:'),
            applied === false ? 'nothing was applied.' : 'fix these before applying.', h('ul', { class: 'problems' }, errors.map(GC.problemItem))));
        } else if (applied) {
          result.appendChild(h('p', { class: 'notice', id: 'policy-applied' }, 'Applied: version ' + verdict.version + ' is in force.'));
        } else {
          result.appendChild(h('p', { class: 'result valid', id: 'policy-valid' }, 'Valid: this policy can be applied.'));
        }
        if (warnings.length) result.appendChild(h('div', { class: 'card' }, h('strong', {}, 'Warnings'), h('ul', { class: 'problems' }, warnings.map((w) => h('li', {}, w)))));
      }
      async function check() {
        const verdict = await GC.api('POST', '/policy/validate', { body: textarea.value, contentType: 'application/yaml' });
        showVerdict(verdict, undefined);
        return verdict.valid;
      }
      validate.addEventListener('click', async () => {
        validate.disabled = true;
        await GC.attempt(check);
        validate.disabled = false;
      });
      apply.addEventListener('click', async () => {
        apply.disabled = true;
        await GC.attempt(async () => {
          if (!(await check())) return;
          try {
            const answer = await GC.api('PUT', '/policy', { body: textarea.value, contentType: 'application/yaml' });
            showVerdict(answer, true);
            describe(answer.version, 'applied through the admin API');
            await loadView();
          } catch (error) {
            if (error.status === 422 && error.body) { showVerdict({ errors: error.body.errors || [{ key: '', problem: error.message }] }, false); return; }
            throw error;
          }
        });
        apply.disabled = false;
      });
      reload.addEventListener('click', () => GC.attempt(loadEditor));
    }

    await Promise.all([loadView(), loadEditor()]);
  };
})();
