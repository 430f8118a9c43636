/*
 * The console's Users pages (second factors): #/users looks a user up by name (GET /admin/v1/users/{name});
 * #/user/<name> shows the factors the user enrolled — which check, when, recovery codes left, never a secret — and
 * for a gatehouse.admin session resets one (a lost phone: DELETE /admin/v1/users/{name}/factors/{factor}), so
 * that the user's next login enrols a new secret.
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};
  const pages = GC.pages = GC.pages || {};

  pages.users = async function (container) {
    const h = GC.h;
    container.appendChild(h('h1', {}, 'Users'));
    container.appendChild(h('p', { class: 'muted' }, 'The second factors a user enrolled (an authenticator app\'s codes, with recovery codes). Resetting one makes the user enrol a new secret at the next login: for a lost or replaced phone.'));
    document.title = 'Users · Gatehouse console';
    const input = h('input', { id: 'user-search-name', name: 'username', placeholder: 'user name', autocapitalize: 'none', spellcheck: 'false', required: true });
    const form = h('form', { class: 'card search', role: 'search', 'aria-label': 'Find a user' },
      h('div', { class: 'field' }, h('label', { for: 'user-search-name' }, 'User name'), input),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button primary', id: 'user-search-submit' }, 'Show')));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (input.value.trim()) GC.navigate('#/user/' + encodeURIComponent(input.value.trim()));
    });
    container.appendChild(form);
  };

  pages.user = async function (container, username, current) {
    const h = GC.h;
    container.appendChild(h('h1', {}, 'User ', h('span', { class: 'mono muted' }, username || '')));
    document.title = 'User · Gatehouse console';
    container.appendChild(h('p', {}, h('a', { href: '#/users' }, '← Users')));
    if (!username) { container.appendChild(GC.empty('No user chosen: look one up in Users.')); return; }
    const body = h('div', { id: 'user' });
    container.appendChild(body);
    const path = '/users/' + encodeURIComponent(username);

    async function load() {
      const user = await GC.api('GET', path);
      if (!current()) return;
      GC.clear(body);
      body.appendChild(h('section', { class: 'card', 'aria-labelledby': 'user-facts' }, h('h2', { id: 'user-facts' }, 'User'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'User name'), h('dd', { class: 'mono' }, user.username),
          h('dt', {}, 'Display name'), h('dd', {}, user.displayName),
          h('dt', {}, 'In the policy'), h('dd', {}, user.removedFromPolicy ? 'no (removed; its factors remain until reset)' : 'yes'))));
      body.appendChild(h('h2', {}, 'Second factors'));
      if (!user.factors.length) {
        body.appendChild(GC.empty('No second factor enrolled: the user enrols at the next login that asks for one.'));
        return;
      }
      body.appendChild(GC.table('The factors ' + user.username + ' enrolled', [
        { label: 'Check', cell: (f) => f.factor },
        { label: 'Enrolled', cell: (f) => GC.when(f.enrolledAt) },
        { label: 'Recovery codes left', cell: (f) => f.recoveryCodesLeft === undefined ? '—' : String(f.recoveryCodesLeft) },
        { label: 'Action', cell: (f) => GC.confirmButton('Reset…', 'Press again to reset', async () => {
          if (await GC.attempt(() => GC.api('DELETE', path + '/factors/' + encodeURIComponent(f.factor)))) {
            await GC.attempt(load);
            GC.notify(f.factor + ' of ' + user.username + ' was reset: the next login enrols a new secret.');
          }
        }, { 'data-reset-factor': f.factor, 'aria-label': 'Reset ' + f.factor + ' of ' + user.username, disabled: !GC.canWrite() }) },
      ], user.factors, { rowAttributes: (f) => ({ 'data-factor': f.factor }) }));
    }
    await load();
  };
})();
