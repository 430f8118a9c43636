/*
 * The console's Devices pages (device management): #/devices finds devices by display name, user, device id or
 * application (GET /admin/v1/devices); #/device/<id> shows one with every application registered on it, and for a
 * gatehouse.admin session sets its status (Active, Lost, Stolen, Disabled), blocks or unblocks one application on
 * it, and unregisters it (PUT and DELETE /admin/v1/devices/{id}).
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};
  const pages = GC.pages = GC.pages || {};
  const STATUSES = ['ACTIVE', 'LOST', 'STOLEN', 'DISABLED'];
  let lastSearch = { displayName: '', user: '', device: '', application: '' };

  function statusBadge(status) {
    return GC.badge(status.toLowerCase(), status === 'ACTIVE' ? 'active' : 'blocked');
  }

  function deviceLink(id) {
    return GC.h('a', { href: '#/device/' + encodeURIComponent(id) }, id);
  }

  pages.devices = async function (container, _argument, current) {
    const h = GC.h;
    container.appendChild(h('h1', {}, 'Devices'));
    container.appendChild(h('p', { class: 'muted' }, 'Devices, by the applications registered on them. Search by display name, user, device id or application (exact match). A lost, stolen or disabled device gets no token for any application until it is set active again.'));
    document.title = 'Devices · Gatehouse console';
    const field = (name, label, hint) => h('div', { class: 'field' },
      h('label', { for: 'device-search-' + name }, label),
      h('input', { id: 'device-search-' + name, name: name, value: lastSearch[name], placeholder: hint, autocapitalize: 'none', spellcheck: 'false' }));
    const form = h('form', { class: 'card search', role: 'search', 'aria-label': 'Search devices' },
      field('displayName', 'Display name', "Ann's phone"), field('user', 'User', 'user name'), field('device', 'Device id', 'device id'),
      field('application', 'Application', 'com.example.app'),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button primary', id: 'device-search-submit' }, 'Search')));
    const results = h('div', { id: 'devices' });
    container.append(form, results);
    let cursors = [undefined];

    async function load() {
      const page = await GC.api('GET', '/devices', { query: Object.assign({ limit: 50, after: cursors[cursors.length - 1] }, lastSearch) });
      if (!current()) return;
      GC.clear(results);
      const filtered = Object.values(lastSearch).some(Boolean);
      if (!page.devices.length) {
        results.appendChild(GC.empty(filtered ? 'No device matches this search.' : 'No device has registered yet.'));
      } else {
        results.appendChild(GC.table('Devices' + (filtered ? ' that match' : ''), [
          { label: 'Device', class: 'id', cell: (d) => [deviceLink(d.id), d.displayName || d.hardware ? h('br') : null,
            h('span', { class: 'muted' }, [d.displayName, d.hardware].filter(Boolean).join(' · '))] },
          { label: 'Users', cell: (d) => d.users.length ? d.users.join(', ') : h('span', { class: 'muted' }, 'none') },
          { label: 'Applications', cell: (d) => d.registrations.map((r) => r.application.id + (r.blocked ? ' (blocked)' : '')).join(', ') },
          { label: 'Status', cell: (d) => h('span', { 'data-device-status': d.id }, statusBadge(d.status)) },
        ], page.devices, { rowAttributes: (d) => ({ 'data-device': d.id }) }));
      }
      results.appendChild(GC.pager(cursors, page.next, load, 'devices'));
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      lastSearch = {};
      for (const name of ['displayName', 'user', 'device', 'application']) lastSearch[name] = form.elements[name].value.trim();
      cursors = [undefined];
      GC.attempt(load);
    });
    await load();
  };

  pages.device = async function (container, deviceId, current) {
    const h = GC.h;
    container.appendChild(h('h1', {}, 'Device ', h('span', { class: 'mono muted' }, deviceId || '')));
    document.title = 'Device · Gatehouse console';
    container.appendChild(h('p', {}, h('a', { href: '#/devices' }, '← Devices')));
    if (!deviceId) { container.appendChild(GC.empty('No device chosen: pick one in Devices.')); return; }
    const body = h('div', { id: 'device' });
    container.appendChild(body);
    const path = '/devices/' + encodeURIComponent(deviceId);

    async function put(change, done) {
      if (await GC.attempt(() => GC.api('PUT', path, { body: JSON.stringify(change) }))) {
        await GC.attempt(load);
        GC.notify(done);
      }
    }

    async function load() {
      const device = await GC.api('GET', path);
      if (!current()) return;
      GC.clear(body);
      body.appendChild(h('section', { class: 'card', 'aria-labelledby': 'device-facts' }, h('h2', { id: 'device-facts' }, 'Device'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'Device id'), h('dd', { class: 'mono' }, device.id),
          h('dt', {}, 'Display name'), h('dd', {}, device.displayName || '—'),
          h('dt', {}, 'Hardware'), h('dd', {}, [device.hardware, device.platform].filter(Boolean).join(' · ') || '—'),
          h('dt', {}, 'Users'), h('dd', {}, device.users.join(', ') || 'none'),
          h('dt', {}, 'Status'), h('dd', { id: 'device-status' }, statusBadge(device.status)))));

      const select = h('select', { id: 'device-status-select', disabled: !GC.canWrite() },
        STATUSES.map((value) => h('option', { value: value, selected: value === device.status }, value.charAt(0) + value.slice(1).toLowerCase())));
      const save = h('button', { type: 'submit', class: 'button primary', id: 'device-status-save', disabled: !GC.canWrite() }, 'Set status');
      const form = h('form', { class: 'card search', 'aria-label': 'Set the status of device ' + device.id },
        h('div', { class: 'field' }, h('label', { for: 'device-status-select' }, 'Status'), select), h('div', { class: 'actions' }, save));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        save.disabled = true;
        await put({ status: select.value }, 'Device ' + device.id + ' is ' + select.value.toLowerCase() + ' on every node from its next request' +
          (select.value === 'ACTIVE' ? '.' : ': its tokens were revoked.'));
        save.disabled = !GC.canWrite();
      });
      body.appendChild(form);

      body.appendChild(h('h2', {}, 'Applications on this device'));
      if (!device.registrations.length) {
        body.appendChild(GC.empty('No application is registered on this device.'));
      } else {
        body.appendChild(GC.table('Each registration of the device; blocking an application refuses it here alone.', [
          { label: 'Application', cell: (r) => r.application.id + ' (' + r.application.clientPlatform + (r.application.version ? ' ' + r.application.version : '') + ')' },
          { label: 'Client id', class: 'id', cell: (r) => h('a', { href: '#/client/' + encodeURIComponent(r.clientId) }, r.clientId) },
          { label: 'User', cell: (r) => r.user || h('span', { class: 'muted' }, 'none') },
          { label: 'Access', cell: (r) => GC.badge(r.blocked ? 'blocked' : 'allowed', r.blocked ? 'blocked' : 'active') },
          { label: 'Action', cell: (r) => {
            const blockedHere = device.blockedApplications.includes(r.application.id);
            const label = blockedHere ? 'Unblock' : 'Block';
            const button = h('button', { type: 'button', class: 'button' + (blockedHere ? ' primary' : ''), 'data-block': r.application.id,
              disabled: !GC.canWrite(), 'aria-label': label + ' ' + r.application.id + ' on this device' }, label);
            button.addEventListener('click', async () => {
              button.disabled = true;
              const others = device.blockedApplications.filter((id) => id !== r.application.id);
              await put({ blockedApplications: blockedHere ? others : others.concat([r.application.id]) },
                r.application.id + (blockedHere ? ' is allowed on this device again.' : ' is blocked on this device: its tokens were revoked.'));
            });
            return button;
          } },
        ], device.registrations, { rowAttributes: (r) => ({ 'data-registration': r.clientId }) }));
      }

      body.appendChild(h('h2', {}, 'Unregister'));
      const remove = GC.confirmButton('Unregister the device…', 'Press again to unregister', async () => {
        if (await GC.attempt(() => GC.api('DELETE', path))) {
          GC.navigate('#/devices', 'Device ' + deviceId + ' unregistered: its registrations and state were deleted and its tokens revoked.');
        }
      }, { id: 'device-delete', disabled: !GC.canWrite() });
      body.appendChild(h('div', { class: 'actions' }, remove));
      body.appendChild(h('p', { class: 'muted' }, 'Unregistering deletes every registration of the device with its state, after revoking their tokens; its applications must register again.'));
      if (!GC.canWrite()) body.appendChild(h('p', { class: 'muted' }, 'Read-only session: sign in with gatehouse.admin to change anything.'));
    }
    await load();
  };
})();
