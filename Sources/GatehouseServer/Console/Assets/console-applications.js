/*
 * The console's Applications page (application management): each application of the policy with the versions its
 * registrations have (counted, with the status in force for each) and its version rules; for a gatehouse.admin
 * session, a form that adds a rule (first match wins, so a new rule goes first) and a button per rule that removes it,
 * both through PUT /admin/v1/applications/{id}/{platform}/versions.
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};
  const pages = GC.pages = GC.pages || {};

  function statusBadge(status) {
    return GC.badge(status, status === 'disabled' ? 'blocked' : status === 'notify' ? 'attempting' : 'active');
  }

  function ruleText(rule) {
    return [rule.message, rule.downloadLink ? '→ ' + rule.downloadLink : null].filter(Boolean).join(' ');
  }

  async function putRules(app, rules) {
    const path = '/applications/' + encodeURIComponent(app.id) + '/' + encodeURIComponent(app.platform) + '/versions';
    const body = rules.map((rule) => {
      const plain = { versions: rule.versions, status: rule.status };
      if (rule.message) plain.message = rule.message;
      if (rule.messages) plain.messages = rule.messages;
      if (rule.downloadLink) plain.downloadLink = rule.downloadLink;
      return plain;
    });
    return GC.api('PUT', path, { body: JSON.stringify({ versions: body }) });
  }

  function ruleForm(app, index, reload) {
    const h = GC.h;
    const id = (name) => 'rule-' + index + '-' + name;
    const field = (name, label, control) => h('div', { class: 'field' }, h('label', { for: id(name) }, label), control);
    const versions = h('input', { id: id('versions'), value: '*', placeholder: '* or 2.1 or < 2.0', autocapitalize: 'none', spellcheck: 'false' });
    const status = h('select', { id: id('status') },
      ['notify', 'disabled', 'active'].map((value) => h('option', { value: value }, value)));
    const message = h('input', { id: id('message'), placeholder: 'What users are shown' });
    const link = h('input', { id: id('link'), placeholder: 'https://… (disabled: the new version)', autocapitalize: 'none', spellcheck: 'false' });
    const submit = h('button', { type: 'submit', class: 'button primary', id: id('add'), disabled: !GC.canWrite() }, 'Add rule');
    const form = h('form', { class: 'card search', 'aria-label': 'Add a version rule to ' + app.id + ' (' + app.platform + ')' },
      field('versions', 'Versions', versions), field('status', 'Status', status), field('message', 'Message', message),
      field('link', 'Download link', link), h('div', { class: 'actions' }, submit));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const rule = { versions: versions.value.trim() || '*', status: status.value, message: message.value.trim(), downloadLink: link.value.trim() };
      if (await GC.attempt(() => putRules(app, [rule].concat(app.versions)))) {
        await GC.attempt(reload);
        GC.notify(app.id + ' (' + app.platform + '): versions ' + rule.versions + ' are ' + rule.status + ' on every node within seconds.');
      }
      submit.disabled = !GC.canWrite();
    });
    return form;
  }

  pages.applications = async function (container, _argument, current) {
    const h = GC.h;
    container.appendChild(h('h1', {}, 'Applications'));
    container.appendChild(h('p', { class: 'muted' }, 'The versions registrations have, and their status: active, notify (users are shown a message once) or disabled (no token until they upgrade). Rules are read first to last; the first that matches a version decides.'));
    document.title = 'Applications · Gatehouse console';
    const body = h('div', { id: 'applications' });
    container.appendChild(body);
    async function load() {
      const answer = await GC.api('GET', '/applications');
      if (!current()) return;
      GC.clear(body);
      if (!answer.applications.length) { body.appendChild(GC.empty('The policy has no application.')); return; }
      answer.applications.forEach((app, index) => {
        const section = h('section', { class: 'card', 'data-application': app.id + '/' + app.platform, 'aria-label': app.id + ' (' + app.platform + ')' },
          h('h2', {}, app.id + ' ', h('span', { class: 'muted' }, app.platform + (app.version ? ' ' + app.version : ''))));
        section.appendChild(app.seen.length ? GC.table('Versions registered', [
          { label: 'Version', class: 'id', cell: (v) => v.version === null ? '(none)' : v.version },
          { label: 'Registrations', cell: (v) => String(v.registrations) },
          { label: 'Status', cell: (v) => statusBadge(v.status) },
        ], app.seen) : GC.empty('No registration yet.'));
        section.appendChild(app.versions.length ? GC.table('Version rules', [
          { label: 'Versions', class: 'id', cell: (r) => r.versions },
          { label: 'Status', cell: (r) => statusBadge(r.status) },
          { label: 'Message', cell: (r) => ruleText(r) || h('span', { class: 'muted' }, '—') },
          { label: 'Action', cell: (r) => GC.confirmButton('Remove…', 'Press again to remove', async () => {
            if (await GC.attempt(() => putRules(app, app.versions.filter((other) => other !== r)))) {
              await GC.attempt(load);
              GC.notify('Rule ' + r.versions + ' removed from ' + app.id + ' (' + app.platform + ').');
            }
          }, { disabled: !GC.canWrite(), 'data-remove-rule': r.versions, 'aria-label': 'Remove rule ' + r.versions + ' of ' + app.id }) },
        ], app.versions) : h('p', { class: 'muted' }, 'No version rule: every version is active.'));
        if (GC.canWrite()) section.appendChild(ruleForm(app, index, load));
        body.appendChild(section);
      });
      if (!GC.canWrite()) body.appendChild(h('p', { class: 'muted' }, 'Read-only session: sign in with gatehouse.admin to change anything.'));
    }
    await load();
  };
})();
