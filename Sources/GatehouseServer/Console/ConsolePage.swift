// A web asset embedded in Swift source: the console's HTML shell, served at `/console` by ConsoleRoutes so the
// single `gatehouse` binary serves the whole console (no file on disk, no CDN). The page holds no inline script
// or style: the Content-Security-Policy allows only Gatehouse's own /console/ assets.

/// The console's HTML shell: the sign-in form, the navigation and the region each page is drawn into by
/// `console.js`.
enum ConsolePage {
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta name="referrer" content="no-referrer">
      <title>Gatehouse console</title>
      <link rel="icon" href="/console/icon.svg" type="image/svg+xml">
      <link rel="stylesheet" href="/console/console.css">
      <script src="/console/console-chart.js" defer></script>
      <script src="/console/console-pages.js" defer></script>
      <script src="/console/console.js" defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to the page</a>
      <header class="top">
        <div class="brand"><img class="logo" src="/console/icon.svg" alt=""> Gatehouse <span class="muted">console</span></div>
        <div class="who" id="who" hidden>
          <span id="who-name"></span>
          <button type="button" class="button ghost" id="sign-out">Sign out</button>
        </div>
      </header>
      <nav id="nav" aria-label="Console pages" hidden>
        <ul>
          <li><a href="#/dashboard" data-page="dashboard">Dashboard</a></li>
          <li><a href="#/registrations" data-page="registrations">Registrations</a></li>
          <li><a href="#/applications" data-page="applications">Applications</a></li>
          <li><a href="#/devices" data-page="devices">Devices</a></li>
          <li><a href="#/users" data-page="users">Users</a></li>
          <li><a href="#/accounts" data-page="accounts">Accounts</a></li>
          <li><a href="#/keys" data-page="keys">Keys</a></li>
          <li><a href="#/audit" data-page="audit">Audit trail</a></li>
          <li><a href="#/policy" data-page="policy">Policy</a></li>
        </ul>
      </nav>
      <main id="main" tabindex="-1">
        <div id="notice" class="notice" role="status" aria-live="polite" hidden></div>
        <div id="error" class="error" role="alert" hidden></div>
        <noscript><p class="error">The console needs JavaScript (its own scripts, served by Gatehouse; nothing from elsewhere).</p></noscript>
        <section id="signin" class="signin" aria-labelledby="signin-title" hidden>
          <h1 id="signin-title">Sign in</h1>
          <p>Sign in as a confidential client of the policy that holds the scope <code>gatehouse.admin</code>
            (or <code>gatehouse.admin.read</code> to look without changing anything).</p>
          <form id="signin-form" class="card form" novalidate>
            <label for="signin-id">Client id</label>
            <input id="signin-id" name="id" autocomplete="username" required autocapitalize="none" spellcheck="false">
            <label for="signin-secret">Secret</label>
            <input id="signin-secret" name="secret" type="password" autocomplete="current-password" required>
            <fieldset>
              <legend>Access</legend>
              <label class="inline"><input type="radio" name="scope" value="gatehouse.admin" checked> Administer (<code>gatehouse.admin</code>)</label>
              <label class="inline"><input type="radio" name="scope" value="gatehouse.admin.read"> Read only (<code>gatehouse.admin.read</code>)</label>
            </fieldset>
            <button type="submit" class="button primary" id="signin-submit">Sign in</button>
          </form>
        </section>
        <div id="page"></div>
      </main>
    </body>
    </html>
    """#
}
