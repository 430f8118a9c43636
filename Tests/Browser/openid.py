#!/usr/bin/env python3
"""Browser test: Gatehouse's OpenID Provider signing a user in to Apache with mod_auth_openidc (Debian's
libapache2-mod-auth-openidc, configured as its documentation says), in headless Chromium.

    python3 Tests/Browser/openid.py [--gatehouse .build/debug/gatehouse] [--screenshots Tests/Browser/screenshots]
                                    [--verbose] [--keep]

A throwaway Apache (own ServerRoot and configuration in a temporary folder, in the foreground, on a free loopback port;
no system service) protects /protected/ with mod_auth_openidc as the confidential client apache-rp (client_secret_basic,
PKCE S256, scope "openid profile email", the provider's metadata from Gatehouse's discovery), and /protected/mfa/ with
step-up: `Require claim acr:urn:gatehouse:acr:mfa`, `OIDCPathAuthRequestParams acr_values=urn:gatehouse:acr:mfa` and
`OIDCUnAutzAction auth` (a session without that acr is sent to the provider again); /protected/passkey/ the same for
urn:gatehouse:acr:passkey, with prompt=login. Its pages are server-side includes echoing the OIDC_CLAIM_* variables the
module sets. `gatehouse serve` runs the policy of Tests/OpenID/provider.py (UserLogin proving urn:gatehouse:acr:password,
TOTP urn:gatehouse:acr:mfa, Passkey urn:gatehouse:acr:passkey) on a free port picked here, as the issuer
http://localhost:<port>: WebAuthn's relying party must be a domain (rpID localhost), not an address. Steps:

  sign-in       /protected/ -> Gatehouse's sign-in page; a wrong password shows the page's error; john/demo -> back on
                the protected page, which shows sub john, email john@example.com, acr urn:gatehouse:acr:password
  step-up-mfa   /protected/mfa/ -> Gatehouse's page asks TOTP enrolment (the secret shown), the code computed here ->
                recovery codes (with the continue link as the only way on) -> continue -> the mfa page shows acr
                urn:gatehouse:acr:mfa
  passkey       Chromium with a virtual authenticator (WebDriver's WebAuthn extension: CTAP2, internal, resident key,
                user verification). /protected/passkey/ -> the page asks the password (prompt=login), then shows
                "Create a passkey" -> navigator.credentials.create -> the passkey page shows acr
                urn:gatehouse:acr:passkey, amr with hwk. Then Apache's session cookie is dropped (Gatehouse's kept):
                /protected/passkey/ again -> password (prompt=login: a new sign-in session) -> "Sign in with a passkey"
                -> navigator.credentials.get -> signed in the same way; the authenticator holds 1 credential
  custom-check  the page contract's generic renderer (a check of one's own: `message` and `fields` in its challenge),
                against a stub: a loopback Python server serving Gatehouse's sign-in page, sign-in.js and the
                stylesheets as fetched from `gatehouse serve` (unmodified bytes, the page with Gatehouse's headers, its
                CSP included) and answering POST /oidc/sign-in itself: a LetterPIN challenge (a password and a number
                field), then, for exactly {"LetterPIN":{"pin":"8472","count":3}}, a redirect to its /done. Checks the
                labels (`for` = the inputs' ids), no inline script or handler, no CSP violation, and that every round
                carried the page's request and csrf
  logout        mod_auth_openidc's logout (/protected/redirect_uri?logout=...) -> Gatehouse's end_session_endpoint with
                the id_token_hint -> loggedout.html; /protected/ then asks the password again (both sessions ended)

Screenshots (desktop and phone width) go to the screenshots folder (git-ignored). Every wait is bounded;
scripts/browser-test runs this under its watchdog (--openid-only runs it alone, --no-openid skips it).
"""

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "Tests" / "OpenID"))
import run as harness  # noqa: E402 - the shared helpers of the browser tests (gatehouse, cleanup, browser)
import console  # noqa: E402 - its bounded DOM waits and screenshots
import fixtures  # noqa: E402
import nginx  # noqa: E402 - free_port
import provider  # noqa: E402 - the OpenID Provider's policy, clients and TOTP codes

STEPS = ["sign-in", "step-up-mfa", "passkey", "custom-check", "logout"]
CLIENT_ID = "apache-rp"
WAIT = 20
log = harness.log

APACHE_MODULES = ["mpm_event", "authn_core", "authz_core", "authz_user", "auth_openidc", "include", "mime", "dir"]

CLAIMS_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title></head>
<body>
<h1 id="title">{title}</h1>
<p>Signed in through mod_auth_openidc; the claims it passes to this page:</p>
<dl>
<dt>sub</dt><dd id="claim-sub"><!--#echo var="OIDC_CLAIM_sub" --></dd>
<dt>name</dt><dd id="claim-name"><!--#echo var="OIDC_CLAIM_name" --></dd>
<dt>email</dt><dd id="claim-email"><!--#echo var="OIDC_CLAIM_email" --></dd>
<dt>acr</dt><dd id="claim-acr"><!--#echo var="OIDC_CLAIM_acr" --></dd>
<dt>amr</dt><dd id="claim-amr"><!--#echo var="OIDC_CLAIM_amr" --></dd>
<dt>iss</dt><dd id="claim-iss"><!--#echo var="OIDC_CLAIM_iss" --></dd>
<dt>REMOTE_USER</dt><dd id="remote-user"><!--#echo var="REMOTE_USER" --></dd>
</dl>
</body></html>
"""
LOGGED_OUT_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head>
<body><h1 id="signed-out">Signed out of the Apache test app</h1></body></html>
"""


def find_apache():
    for candidate in (shutil.which("apache2"), "/usr/sbin/apache2"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Apache:
    """Debian's Apache with mod_auth_openidc on `port`, as the relying party `client` of the provider at `issuer`,
    until `stop()`. Its ServerRoot, configuration, pages and logs are in `folder`."""

    def __init__(self, folder, port, issuer, client, start_timeout=15):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        binary = find_apache()
        if binary is None:
            raise RuntimeError("apache2 is not installed (apt-get install apache2 libapache2-mod-auth-openidc)")
        modules = Path("/usr/lib/apache2/modules")
        missing = [name for name in APACHE_MODULES if not (modules / f"mod_{name}.so").exists()]
        if missing:
            raise RuntimeError(f"Apache modules missing: {missing} (apt-get install libapache2-mod-auth-openidc)")
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.logged_out = self.url + "/loggedout.html"
        htdocs = self.folder / "htdocs"
        (htdocs / "protected" / "mfa").mkdir(parents=True, exist_ok=True)
        (htdocs / "protected" / "passkey").mkdir(parents=True, exist_ok=True)
        (self.folder / "run").mkdir(exist_ok=True)
        (htdocs / "protected" / "index.shtml").write_text(CLAIMS_PAGE.format(title="Apache test app: protected"))
        (htdocs / "protected" / "mfa" / "index.shtml").write_text(
            CLAIMS_PAGE.format(title="Apache test app: protected, second factor"))
        (htdocs / "protected" / "passkey" / "index.shtml").write_text(
            CLAIMS_PAGE.format(title="Apache test app: protected, passkey"))
        (htdocs / "loggedout.html").write_text(LOGGED_OUT_PAGE)
        # Apache's workers run as www-data when started by root: they read the pages.
        for path in [self.folder, *self.folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
        loads = "\n".join(f"LoadModule {name}_module {modules}/mod_{name}.so" for name in APACHE_MODULES)
        config = f"""ServerRoot "{self.folder}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{self.folder}/run/apache2.pid"
DefaultRuntimeDir "{self.folder}/run"
Mutex file:{self.folder}/run default
{user}{loads}
ErrorLog "{self.folder}/error.log"
LogLevel warn auth_openidc:info
LogFormat "%h %u %t \\"%r\\" %>s %b" common
CustomLog "{self.folder}/access.log" common
TypesConfig /etc/mime.types
AddType text/html .shtml
AddOutputFilter INCLUDES .shtml
DirectoryIndex index.shtml index.html
DocumentRoot "{htdocs}"
<Directory "{htdocs}">
    Options +Includes
    AllowOverride None
    Require all granted
</Directory>

OIDCProviderMetadataURL {issuer}/.well-known/openid-configuration
OIDCClientID {client.id}
OIDCClientSecret {client.secret}
OIDCProviderTokenEndpointAuth client_secret_basic
OIDCRedirectURI {self.url}/protected/redirect_uri
OIDCCryptoPassphrase {secrets.token_urlsafe(32)}
OIDCScope "openid profile email"
OIDCPKCEMethod S256
OIDCCookieSameSite On
OIDCSSLValidateServer Off
OIDCHTTPTimeoutLong 10
OIDCHTTPTimeoutShort 5
OIDCStateTimeout 120
OIDCPassClaimsAs environment
OIDCRemoteUserClaim sub
OIDCDefaultLoggedOutURL {self.logged_out}

<Location /protected/>
    AuthType openid-connect
    Require valid-user
</Location>
<Location /protected/mfa/>
    AuthType openid-connect
    OIDCPathAuthRequestParams acr_values={urllib.parse.quote(provider.ACR_MFA, safe="")}
    OIDCUnAutzAction auth
    Require claim acr:{provider.ACR_MFA}
</Location>
<Location /protected/passkey/>
    AuthType openid-connect
    OIDCPathAuthRequestParams "acr_values={urllib.parse.quote(provider.ACR_PASSKEY, safe="")}&prompt=login"
    OIDCUnAutzAction auth
    Require claim acr:{provider.ACR_PASSKEY}
</Location>
"""
        self.config = self.folder / "apache2.conf"
        self.config.write_text(config, encoding="utf-8")
        self.config.chmod(0o644)
        checked = subprocess.run([binary, "-t", "-d", str(self.folder), "-f", str(self.config)],
                                 capture_output=True, text=True, timeout=30)
        if checked.returncode != 0:
            raise RuntimeError(f"apache2 -t refused the configuration:\n{checked.stdout}{checked.stderr}")
        self.process = subprocess.Popen([binary, "-d", str(self.folder), "-f", str(self.config), "-DFOREGROUND"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + start_timeout
        while True:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode("utf-8", "replace")
                raise RuntimeError(f"apache2 exited with status {self.process.returncode}:\n{output}{self.error_log()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"apache2 did not listen within {start_timeout} s:\n{self.error_log()}")
                time.sleep(0.1)

    def error_log(self):
        path = self.folder / "error.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def access_log(self):
        path = self.folder / "access.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def stop(self):
        fixtures.terminate(self.process)


class SignInUI(console.Console):
    """Gatehouse's hosted sign-in page and the Apache pages in Chromium: the console test's bounded waits and
    screenshots, the errors read from the sign-in page's #gatehouse-error."""

    def error_text(self):
        try:
            box = self.find("#gatehouse-error")
            return box.text if box is not None and box.is_displayed() else ""
        except Exception:  # noqa: BLE001
            return ""

    def url(self):
        return self.driver.current_url

    def checks(self):
        try:
            return [element.get_attribute("data-check") for element in self.find_all("#gatehouse-sign-in fieldset[data-check]")]
        except Exception:  # noqa: BLE001 - redrawn meanwhile
            return []

    def type(self, css, text):
        element = self.wait(lambda: self.visible(css), f"{css} to be visible")
        element.clear()
        element.send_keys(text)


def run_steps(settings, results, folder):
    apache_port = nginx.free_port()
    apache_url = f"http://127.0.0.1:{apache_port}"
    client = provider.confidential(settings.gatehouse, CLIENT_ID, [apache_url + "/protected/redirect_uri"],
                                   post_logout_redirect_uris=[apache_url + "/loggedout.html"],
                                   display_name="Apache test app")
    gatehouse, document = provider.start(settings.gatehouse, folder / "gatehouse", [client], settings.start_timeout)
    settings.logs.append(("gatehouse output", gatehouse.text))
    issuer = document["issuer"]
    apache_folder = Path(tempfile.mkdtemp(prefix="gatehouse-apache-"))
    harness.on_cleanup(lambda: shutil.rmtree(apache_folder, ignore_errors=True) if not settings.keep else None)
    apache = Apache(apache_folder, apache_port, issuer, client)
    harness.on_cleanup(apache.stop)
    settings.logs += [("apache error log", apache.error_log), ("apache access log", apache.access_log)]
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libapache2-mod-auth-openidc"],
                             capture_output=True, text=True, timeout=10).stdout or "?"
    log(f"INFO apache listens on {apache.url} (mod_auth_openidc {version}, folder {apache_folder}); "
        f"provider {issuer}")

    profile = folder / "chromium-profile"
    browser = harness.Browser(settings, profile, network_log=True)
    driver = browser.driver
    settings.logs.insert(0, ("browser console", lambda: (browser.drain(), "\n".join(browser.console))[1]))
    settings.logs.insert(1, ("network log", lambda: (browser.drain(), "\n".join(browser.network.lines()))[1]))
    ui = SignInUI(driver, apache.url, settings.screenshots)
    ui.size(*console.DESKTOP, False)

    def on_gatehouse_page(check):
        return ui.url().startswith(issuer + "/") and check in ui.checks() and ui.visible("#gatehouse-submit")

    def on_apache_page(path):
        return ui.url().split("?")[0] == apache.url + path and ui.find("#claim-sub") is not None

    def step(name, function):
        started = time.monotonic()
        try:
            detail = function()
            results[name] = ("pass", detail)
            log(f"PASS [openid] {name}: {detail} ({time.monotonic() - started:.1f} s)")
        except Exception as error:  # noqa: BLE001 - a failed step is reported, the others still run
            results[name] = ("fail", f"{type(error).__name__}: {error}")
            log(f"FAIL [openid] {name}: {type(error).__name__}: {error} (at {ui.url()})")

    def sign_in():
        driver.get(apache.url + "/protected/")
        ui.wait(lambda: on_gatehouse_page("UserLogin"), "Gatehouse's sign-in page asking UserLogin", WAIT)
        authorize = urllib.parse.urlsplit(ui.url())
        assert authorize.path == "/oidc/authorize", f"the sign-in page is at {ui.url()}"
        asked = provider.query(ui.url())
        assert asked.get("client_id") == CLIENT_ID and asked.get("code_challenge_method") == "S256", \
            f"mod_auth_openidc's authorization request: {asked}"
        ui.shoot("openid-sign-in")
        ui.type('input[name="username"]', provider.USER)
        ui.type('input[name="password"]', "not-the-password")
        ui.click("#gatehouse-submit")
        ui.wait(lambda: ui.error_text(), "the wrong password's error on the page", WAIT)
        wrong = ui.error_text()
        ui.type('input[name="username"]', provider.USER)
        ui.type('input[name="password"]', provider.PASSWORD)
        ui.click("#gatehouse-submit")
        ui.wait(lambda: on_apache_page("/protected/"), "the protected page after the sign-in", WAIT)
        claims = {name: ui.text(f"#claim-{name}") for name in ("sub", "email", "name", "acr", "amr", "iss")}
        ui.shoot("openid-protected")
        expected = {"sub": provider.USER, "email": provider.EMAIL, "acr": provider.ACR_PASSWORD, "iss": issuer}
        wrong_claims = {name: claims[name] for name, value in expected.items() if claims[name] != value}
        assert not wrong_claims, f"the protected page shows {claims}, expected {expected}"
        return f"a wrong password showed {wrong!r}; then the protected page shows {claims}"

    def step_up_mfa():
        driver.get(apache.url + "/protected/mfa/")
        ui.wait(lambda: on_gatehouse_page("TOTP") and ui.visible("#gatehouse-totp-secret"),
                "Gatehouse's page asking TOTP enrolment (the secret shown)", WAIT)
        asked = provider.query(ui.url())
        assert asked.get("acr_values") == provider.ACR_MFA, f"the step-up request's acr_values: {asked.get('acr_values')}"
        checks = ui.checks()
        if "UserLogin" in checks:
            log("INFO [openid] step-up-mfa: the page asks the password again with the TOTP enrolment")
            ui.type('input[name="username"]', provider.USER)
            ui.type('input[name="password"]', provider.PASSWORD)
        secret = ui.text("#gatehouse-totp-secret").strip()
        assert secret, "no TOTP secret shown"
        ui.shoot("openid-totp-enrolment")
        ui.type('input[name="code"]', provider.totp_code(secret))
        ui.click("#gatehouse-submit")
        ui.wait(lambda: ui.visible("#gatehouse-recovery-codes") and ui.visible("#gatehouse-continue"),
                "the recovery codes and the continue link", WAIT)
        codes = [item.text for item in ui.find_all("#gatehouse-recovery-codes li")] or \
            ui.text("#gatehouse-recovery-codes").split()
        # Only the link goes on: the form's own submit button is hidden once the codes are shown.
        stray = "" if not ui.visible("#gatehouse-submit") else \
            f"the form's submit button ({ui.text('#gatehouse-submit')!r}) is still visible beside the continue link"
        continue_to = ui.find("#gatehouse-continue").get_attribute("href")
        assert continue_to.startswith(apache.url + "/protected/redirect_uri?"), \
            f"the continue link goes to {continue_to}, not the client's redirect_uri"
        ui.shoot("openid-recovery-codes")
        ui.click("#gatehouse-continue")
        ui.wait(lambda: on_apache_page("/protected/mfa/"), "the mfa page after the step-up", WAIT)
        claims = {name: ui.text(f"#claim-{name}") for name in ("sub", "acr", "amr")}
        ui.shoot("openid-protected-mfa")
        assert claims["sub"] == provider.USER and claims["acr"] == provider.ACR_MFA, \
            f"the mfa page shows {claims}, expected sub {provider.USER}, acr {provider.ACR_MFA}"
        assert not stray, f"{stray} (screenshot openid-recovery-codes); the rest of the step passed: mfa page shows {claims}"
        return f"asked {checks} (secret of {len(secret)} chars); {len(codes)} recovery code(s) shown; mfa page shows {claims}"

    def logout():
        browser.drain()
        mark = len(browser.network.entries)
        driver.get(apache.url + "/protected/redirect_uri?logout=" + urllib.parse.quote(apache.logged_out, safe=""))
        ui.wait(lambda: ui.url().split("?")[0] == apache.logged_out and ui.find("#signed-out") is not None,
                "loggedout.html after the logout", WAIT)
        landed = ui.url()
        browser.drain()
        ends = [entry for entry in browser.network.since(mark)
                if entry["url"].startswith(issuer + "/oidc/logout")]
        assert ends, "the browser never went through Gatehouse's end_session_endpoint:\n" + \
            "\n".join(browser.network.lines(browser.network.since(mark)))
        sent = provider.query(ends[0]["url"])
        assert sent.get("id_token_hint") and sent.get("post_logout_redirect_uri") == apache.logged_out, \
            f"the logout request carried {sorted(sent)} (post_logout_redirect_uri {sent.get('post_logout_redirect_uri')})"
        location = ends[0]["response_headers"].get("location", "")
        assert ends[0]["status"] in (302, 303) and location.startswith(apache.logged_out), \
            f"Gatehouse's logout answered {ends[0]['status']} Location {location!r}"
        if sent.get("state"):
            assert provider.query(location).get("state") == sent["state"], f"the state was not given back: {location}"
        ui.shoot("openid-logged-out")
        driver.get(apache.url + "/protected/")
        ui.wait(lambda: on_gatehouse_page("UserLogin") or on_apache_page("/protected/"),
                "/protected/ after the logout to show a page", WAIT)
        assert on_gatehouse_page("UserLogin"), f"after the logout /protected/ opened without a sign-in ({ui.url()})"
        return (f"through {ends[0]['url'].split('?')[0]} ({ends[0]['status']}, state "
                f"{'given back' if sent.get('state') else 'not sent'}) to {landed}; /protected/ asks the password again")

    for name, function in (("sign-in", sign_in), ("step-up-mfa", step_up_mfa), ("logout", logout)):
        if name != "sign-in" and results.get("sign-in", ("fail",))[0] != "pass":
            results[name] = ("fail", "not run: the sign-in failed")
            log(f"FAIL [openid] {name}: not run (the sign-in failed)")
            continue
        step(name, function)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=str(REPO / ".build/debug/gatehouse"), help="the gatehouse binary")
    parser.add_argument("--screenshots", default=str(HERE / "screenshots"), help="where the screenshots go")
    parser.add_argument("--chromium", default=None)
    parser.add_argument("--chromedriver", default=None)
    parser.add_argument("--start-timeout", type=float, default=30)
    parser.add_argument("--keep", action="store_true", help="keep the work folders (logs, data, profile, Apache)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the logs even when everything passes")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, harness._terminate)
    signal.signal(signal.SIGHUP, harness._terminate)

    settings = harness.Settings()
    settings.gatehouse = Path(args.gatehouse).absolute()
    settings.start_timeout = args.start_timeout
    settings.keep = args.keep
    settings.screenshots = Path(args.screenshots).resolve()
    settings.screenshots.mkdir(parents=True, exist_ok=True)
    settings.logs = []
    if not os.access(settings.gatehouse, os.X_OK):
        log(f"FAIL setup: no gatehouse binary at {settings.gatehouse} (build it with `swift build`)")
        return 2
    settings.chromium = harness.find_executable(args.chromium, ["chromium", "chromium-browser", "google-chrome"])
    settings.chromedriver = harness.find_executable(args.chromedriver, ["chromedriver"])
    if not settings.chromium or not settings.chromedriver:
        log("FAIL setup: chromium or chromedriver not found (apt-get install chromium chromium-driver)")
        return 2

    work = Path(tempfile.mkdtemp(prefix="gatehouse-openid-browser-"))
    if args.keep:
        log(f"work folder: {work}")
    else:
        harness.on_cleanup(lambda: shutil.rmtree(work, ignore_errors=True))

    log("\n---------------- openid (Apache mod_auth_openidc) ----------------")
    started = time.monotonic()
    results = {}
    try:
        run_steps(settings, results, work)
    except Exception as error:  # noqa: BLE001 - the set-up failed: reported, logs dumped
        log(f"FAIL [openid] setup: {type(error).__name__}: {error}")
        results.setdefault("setup", ("fail", str(error)))
    failed = [name for name in STEPS if results.get(name, ("fail",))[0] != "pass"] + \
             (["setup"] if "setup" in results else [])
    if failed or args.verbose:
        for title, text in settings.logs:
            log(f"\n================ [openid] {title} ================")
            try:
                log(text().rstrip()[-30000:])
            except Exception as error:  # noqa: BLE001 - diagnostics only
                log(f"(unavailable: {error!r})")
    elapsed = time.monotonic() - started
    passed = len(STEPS) - len([name for name in failed if name in STEPS])
    if failed:
        log(f"\nopenid browser test FAILED: {passed}/{len(STEPS)} steps ({', '.join(failed)}); {elapsed:.1f} s")
        return 1
    log(f"\nopenid browser test passed: {passed}/{len(STEPS)} steps; {elapsed:.1f} s; screenshots in {settings.screenshots}")
    return 0


if __name__ == "__main__":
    harness.run_main(main)
