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

import http.server
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "Tests" / "OpenID"))
import run as harness  # noqa: E402 - the shared helpers of the browser tests (gatehouse, cleanup, browser)
import console  # noqa: E402 - its bounded DOM waits and screenshots
import nginx  # noqa: E402 - free_port, FolderServer (the wait to listen, the logs)
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


class Apache(nginx.FolderServer):
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
        self.wait_listening("apache2", start_timeout,
                            output=lambda: self.process.stdout.read().decode("utf-8", "replace"))


CUSTOM_CHECK = "LetterPIN"
CUSTOM_CHALLENGE = {"message": "Enter the PIN from your letter",
                    "fields": [{"name": "pin", "label": "PIN", "type": "password"},
                               {"name": "count", "label": "Count", "type": "number"}]}
CUSTOM_ANSWERS = {CUSTOM_CHECK: {"pin": "8472", "count": 3}}
DONE_PAGE = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Done</title></head>
<body><h1 id="done">The stub's sign-in is done</h1></body></html>
"""
# Gatehouse's headers the stub does not copy onto its copy of the page: the connection's own, and its cookie.
NOT_COPIED = {"content-length", "date", "connection", "keep-alive", "transfer-encoding", "set-cookie", "server"}


def exactly(value, expected):
    """JSON equality that also tells 3 from 3.0, "3" and true."""
    if isinstance(expected, dict):
        return isinstance(value, dict) and value.keys() == expected.keys() and \
            all(exactly(value[key], expected[key]) for key in expected)
    return type(value) is type(expected) and value == expected


class CustomCheckStub:
    """A stand-in for a server with a check of its own (the `gatehouse` binary has only built-in ones): serves, on a
    free loopback port, Gatehouse's sign-in page (`page`: the bytes and headers `GET /oidc/authorize` answered, at
    that path whatever the query) and its assets (path -> (bytes, Content-Type)), all as fetched, and answers the
    page's rounds (`POST /oidc/sign-in`) itself: the LetterPIN challenge, then for exactly CUSTOM_ANSWERS a redirect
    to its /done. `posts`: every round received, (headers, raw body)."""

    def __init__(self, page_body, page_headers, assets):
        self.posts = []
        self.requests = []
        self.lock = threading.Lock()
        self.origin = None
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10

            def log_message(self, *_args):
                pass

            def send(self, status, body, headers):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with stub.lock:
                    stub.requests.append(f"{self.command} {self.path} -> {status}")

            def do_GET(self):  # noqa: N802 - the http.server interface
                path = self.path.split("?")[0]
                if path == "/oidc/authorize":
                    self.send(200, page_body, page_headers)
                elif path in assets:
                    body, content_type = assets[path]
                    self.send(200, body, [("Content-Type", content_type)])
                elif path == "/done":
                    self.send(200, DONE_PAGE, [("Content-Type", "text/html; charset=utf-8")])
                else:
                    self.send(404, b"not here\n", [("Content-Type", "text/plain")])

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 65536)).decode("utf-8", "replace")
                if self.path != "/oidc/sign-in":
                    self.send(404, b"not here\n", [("Content-Type", "text/plain")])
                    return
                with stub.lock:
                    stub.posts.append(({name.lower(): value for name, value in self.headers.items()}, body))
                try:
                    answers = json.loads(body).get("answers")
                except (ValueError, AttributeError):
                    answers = None
                if exactly(answers, CUSTOM_ANSWERS):
                    value = {"redirect": stub.origin + "/done"}
                else:
                    challenge = dict(CUSTOM_CHALLENGE)
                    if answers:   # shown on the page: a wrong answer ends the wait at once
                        challenge["errorMsg"] = f"the stub expected {json.dumps(CUSTOM_ANSWERS)}, got {json.dumps(answers)}"
                    value = {"challenges": {CUSTOM_CHECK: {"kind": CUSTOM_CHECK, "challenge": challenge}}}
                self.send(200, json.dumps(value).encode(), [("Content-Type", "application/json"),
                                                            ("Cache-Control", "no-store")])

        self.handler = Handler

    def start(self):
        self.origin = harness.start_server(self.handler)
        return self.origin

    def rounds(self):
        with self.lock:
            return list(self.posts)


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
    # WebAuthn's relying party is a domain: Gatehouse is reached (and is the issuer) as http://localhost:<port>, a free
    # port picked here (another process may take it meanwhile: then once more with another).
    for attempt in range(3):
        gatehouse_port = nginx.free_port()
        local_issuer = f"http://localhost:{gatehouse_port}"
        try:
            gatehouse, document = provider.start(settings.gatehouse, folder / f"gatehouse-{attempt}", [client],
                                                 settings.start_timeout, port=gatehouse_port, issuer=local_issuer,
                                                 passkey_origin=local_issuer)
            break
        except RuntimeError as error:
            if attempt == 2 or "before listening" not in str(error):
                raise
            log(f"INFO gatehouse did not start on port {gatehouse_port} (taken meanwhile?); another port")
    settings.logs.append(("gatehouse output", gatehouse.text))
    issuer = document["issuer"]
    assert issuer == local_issuer, f"the discovery document's issuer is {issuer}, expected {local_issuer} (--issuer)"
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

    step = harness.step_runner(results, "[openid] ", where=lambda: f" (at {ui.url()})")

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

    def passkey():
        browser.add_authenticator()
        path = "/protected/passkey/"

        def gatehouse_cookie():
            cookies = driver.execute_cdp_cmd("Network.getCookies", {"urls": [issuer + "/oidc/sign-in"]})["cookies"]
            return next((cookie["value"] for cookie in cookies if cookie["name"] == "gatehouse_sid"), None)

        def password_then_passkey(button, shot):
            """From /protected/passkey/ to the page's passkey button (after the password); returns the request."""
            driver.get(apache.url + path)
            ui.wait(lambda: on_gatehouse_page("UserLogin"), "Gatehouse's page asking the password", WAIT)
            asked = provider.query(ui.url())
            assert asked.get("acr_values") == provider.ACR_PASSKEY and asked.get("prompt") == "login", \
                f"the request for {path}: acr_values {asked.get('acr_values')!r}, prompt {asked.get('prompt')!r}"
            ui.type('input[name="username"]', provider.USER)
            ui.type('input[name="password"]', provider.PASSWORD)
            ui.click("#gatehouse-submit")
            ui.wait(lambda: "Passkey" in ui.checks() and ui.visible("#gatehouse-passkey") or ui.error_text(),
                    "the page's passkey button after the password", WAIT)
            assert not ui.error_text(), f"after the password the page shows {ui.error_text()!r}"
            shown = ui.text("#gatehouse-passkey")
            assert shown == button, f"the passkey button says {shown!r}, expected {button!r}"
            ui.shoot(shot)
            return asked

        def use_passkey(what):
            browser.drain()
            mark = len(browser.network.entries)
            ui.click("#gatehouse-passkey")
            ui.wait(lambda: on_apache_page(path) or ui.error_text(), f"the passkey page after {what}", WAIT)
            if not on_apache_page(path):
                browser.drain()
                rounds = [entry for entry in browser.network.since(mark) if "/oidc/sign-in" in entry["url"]]
                raise AssertionError(f"{what}: the page shows {ui.error_text()!r}; its rounds:\n" +
                                     "\n".join(browser.network.lines(rounds)))
            claims = {name: ui.text(f"#claim-{name}") for name in ("sub", "acr", "amr")}
            assert claims["sub"] == provider.USER and claims["acr"] == provider.ACR_PASSKEY and \
                "hwk" in claims["amr"].split(","), \
                f"after {what} the passkey page shows {claims}, expected sub {provider.USER}, acr " \
                f"{provider.ACR_PASSKEY}, amr with hwk"
            return claims

        password_then_passkey("Create a passkey", "openid-passkey-create")
        created = use_passkey("the registration")
        ui.shoot("openid-protected-passkey")
        credentials = driver.get_credentials()
        assert len(credentials) == 1, f"after the registration the authenticator holds {len(credentials)} credentials"
        registered = credentials[0]
        assert registered.rp_id == "localhost" and registered.is_resident_credential, \
            f"the credential: rp {registered.rp_id}, resident {registered.is_resident_credential}"

        # A second sign-in: Apache's session dropped (its cookies on 127.0.0.1), Gatehouse's cookie kept; prompt=login
        # makes the page ask again on a new sign-in session.
        before = gatehouse_cookie()
        driver.delete_all_cookies()
        password_then_passkey("Sign in with a passkey", "openid-passkey-sign-in")
        used = use_passkey("the passkey sign-in")
        after = gatehouse_cookie()
        credentials = driver.get_credentials()
        assert len(credentials) == 1, f"after the passkey sign-in the authenticator holds {len(credentials)} credentials"
        assert credentials[0].id == registered.id and credentials[0].sign_count > registered.sign_count, \
            f"the sign-in did not use the registered credential (sign count {registered.sign_count} -> " \
            f"{credentials[0].sign_count})"
        assert before and after and after != before, \
            f"prompt=login kept the sign-in session: gatehouse_sid {'unchanged' if before == after else 'missing'}"
        return (f"registered (page showed 'Create a passkey') -> {created}; a new session (prompt=login, new "
                f"gatehouse_sid) -> password -> 'Sign in with a passkey' -> {used}; the authenticator holds 1 "
                f"credential (rp localhost, resident, sign count {credentials[0].sign_count})")

    def custom_check():
        import requests
        query = urllib.parse.urlencode({
            "client_id": CLIENT_ID, "redirect_uri": apache.url + "/protected/redirect_uri", "response_type": "code",
            "scope": "openid", "state": secrets.token_urlsafe(12), "nonce": secrets.token_urlsafe(12)})
        page_path = "/oidc/authorize?" + query
        fetched = requests.get(gatehouse.url + page_path, timeout=provider.HTTP_TIMEOUT, allow_redirects=False)
        assert fetched.status_code == 200 and "text/html" in fetched.headers.get("Content-Type", ""), \
            f"GET {page_path} answered {provider.describe(fetched)}"
        csp = fetched.headers.get("Content-Security-Policy")
        assert csp, f"Gatehouse's sign-in page has no Content-Security-Policy: {dict(fetched.headers)}"
        page = provider.SignInPage(fetched.text)
        assert page.request and page.csrf, "Gatehouse's sign-in page has no data-request and data-csrf"
        assets = {}
        for name in ("sign-in.js", "sign-in.css", "theme.css"):
            asset = requests.get(gatehouse.url + "/oidc/assets/" + name, timeout=provider.HTTP_TIMEOUT,
                                 allow_redirects=False)
            assert asset.status_code == 200, f"GET /oidc/assets/{name} answered {asset.status_code}"
            assets["/oidc/assets/" + name] = (asset.content, asset.headers.get("Content-Type", ""))
        page_headers = [(name, value) for name, value in fetched.headers.items() if name.lower() not in NOT_COPIED]
        stub = CustomCheckStub(fetched.content, page_headers, assets)
        origin = stub.start()
        settings.logs.append(("custom-check stub", lambda: "\n".join(stub.requests + [
            f"POST body: {body}" for _headers, body in stub.rounds()])))

        browser.drain()
        mark, console_mark = len(browser.network.entries), len(browser.console)
        driver.get(origin + page_path)
        ui.wait(lambda: CUSTOM_CHECK in ui.checks() and ui.visible("#gatehouse-submit"),
                "the stub's page showing the LetterPIN check", WAIT)
        shown = driver.execute_script("""
            const fieldset = document.querySelector('fieldset[data-check="LetterPIN"]');
            const inputs = [...fieldset.querySelectorAll('input')].map((input) => ({
                id: input.id, name: input.name, type: input.type,
                labels: [...document.querySelectorAll('label')].filter((l) => l.htmlFor === input.id).map((l) => l.textContent),
                labelled: [...(input.labels || [])].map((l) => l.textContent) }));
            const all = [...document.querySelectorAll('*')];
            return {
                legend: (fieldset.querySelector('legend') || {}).textContent,
                messages: [...fieldset.querySelectorAll('p')].map((p) => p.textContent),
                inputs,
                scripts: [...document.scripts].map((s) => s.getAttribute('src')),
                inline: [...document.scripts].filter((s) => !s.src || s.textContent.trim()).length,
                handlers: all.flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => e.tagName + ' ' + a.name)),
                javascriptURLs: document.querySelectorAll('[href^="javascript:" i], [src^="javascript:" i], [action^="javascript:" i]').length,
                styles: document.querySelectorAll('style, [style]').length,
                button: document.getElementById('gatehouse-submit').textContent };
        """)
        problems = []
        if CUSTOM_CHALLENGE["message"] not in shown["messages"]:
            problems.append(f"the message is not shown (paragraphs {shown['messages']})")
        expected_inputs = [(spec["name"], spec["type"], spec["label"]) for spec in CUSTOM_CHALLENGE["fields"]]
        found_inputs = [(item["name"], item["type"], item["labels"][0] if len(item["labels"]) == 1 else item["labels"])
                        for item in shown["inputs"]]
        if found_inputs != expected_inputs:
            problems.append(f"inputs (name, type, the one <label for=id>) {found_inputs}, expected {expected_inputs}")
        if any(item["labelled"] != item["labels"] or not item["id"] for item in shown["inputs"]):
            problems.append(f"input.labels differ from the <label for> found: {shown['inputs']}")
        if shown["inline"] or shown["handlers"] or shown["javascriptURLs"] or shown["styles"]:
            problems.append(f"inline script or style: {shown['inline']} inline script(s), handlers {shown['handlers']}, "
                            f"{shown['javascriptURLs']} javascript: URL(s), {shown['styles']} style element(s)/attribute(s)")
        if shown["scripts"] != ["/oidc/assets/sign-in.js"]:
            problems.append(f"the page's scripts are {shown['scripts']}")
        assert not problems, "; ".join(problems)
        ui.shoot("openid-custom-check")
        ui.type('input[name="pin"]', "8472")
        ui.type('input[name="count"]', "3")
        ui.click("#gatehouse-submit")
        ui.wait(lambda: ui.url() == origin + "/done" and ui.find("#done") is not None or ui.error_text(),
                "the stub's /done after the LetterPIN answer", WAIT)
        rounds = stub.rounds()
        assert ui.url() == origin + "/done", \
            f"the page shows {ui.error_text()!r} at {ui.url()}; the stub received {[body for _h, body in rounds]}"
        sent = [json.loads(body) for _headers, body in rounds]
        assert len(sent) == 2 and sent[0].get("answers") == {} and exactly(sent[1].get("answers"), CUSTOM_ANSWERS), \
            f"the stub received {[body for _h, body in rounds]}, expected a first round with {{}} then exactly " \
            f"{json.dumps(CUSTOM_ANSWERS)}"
        wrong = [body for value, (_h, body) in zip(sent, rounds)
                 if value.get("request") != page.request or value.get("csrf") != page.csrf]
        assert not wrong, f"rounds without the page's request and csrf: {wrong}"
        headers = [(h.get("content-type"), h.get("origin")) for h, _body in rounds]
        assert all(kind == "application/json" and sender == origin for kind, sender in headers), \
            f"the rounds' Content-Type and Origin: {headers}"

        browser.drain()
        served = [entry for entry in browser.network.since(mark)
                  if entry["url"] == origin + page_path and entry["method"] == "GET"]
        assert served and served[0]["status"] == 200, "the browser's request for the stub's page is not in its log"
        stub_csp = served[0]["response_headers"].get("content-security-policy")
        assert stub_csp == csp, f"the stub's page came with CSP {stub_csp!r}, Gatehouse's with {csp!r}"
        scripts = [entry for entry in browser.network.since(mark) if entry["url"] == origin + "/oidc/assets/sign-in.js"]
        assert scripts and scripts[0]["status"] == 200, "the page's script was not loaded from the stub"
        violations = [line for line in browser.console[console_mark:] if "Content Security Policy" in line]
        assert not violations, f"CSP violations in the console: {violations}"
        return (f"the stub's page (Gatehouse's bytes and CSP {csp!r}) showed {shown['messages'][0]!r} and inputs "
                f"{[(name, kind, label) for name, kind, label in found_inputs]} (each <label for> its id), no inline "
                f"script; rounds {[json.dumps(value['answers']) for value in sent]} with the page's request and csrf "
                f"-> {origin}/done")

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

    for name, function in (("sign-in", sign_in), ("step-up-mfa", step_up_mfa), ("passkey", passkey),
                           ("custom-check", custom_check), ("logout", logout)):
        if name not in ("sign-in", "custom-check") and results.get("sign-in", ("fail",))[0] != "pass":
            results[name] = ("fail", "not run: the sign-in failed")
            log(f"FAIL [openid] {name}: not run (the sign-in failed)")
            continue
        step(name, function)


def main():
    settings = harness.standalone_settings(__doc__, keep_help="keep the work folders (logs, data, profile, Apache)")
    if settings is None:
        return 2
    return harness.run_standalone(run_steps, settings, folder="gatehouse-openid-browser-",
                                  heading="openid (Apache mod_auth_openidc)", title="openid browser test",
                                  label="openid", prefix="[openid] ", steps=STEPS, log_tail=30000,
                                  note=f"; screenshots in {settings.screenshots}")


if __name__ == "__main__":
    harness.run_main(main)
