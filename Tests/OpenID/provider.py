"""Gatehouse as an OpenID Provider, for the tests that drive it with clients we did not write
(Tests/OpenID/client_library.py: pyoidc; Tests/Browser/openid.py: Apache's mod_auth_openidc in Chromium).

What is shared: the policy (UserLogin proving urn:gatehouse:acr:password, TOTP after it proving
urn:gatehouse:acr:mfa, the OpenID clients given, john/demo with an email), `gatehouse serve` started on it through
the browser tests' harness (Tests/Browser/run.py's Gatehouse), and the hosted sign-in page's rounds as its own script
posts them (`POST <issuer>/oidc/sign-in`, JSON), for clients that have no browser. Every request has a timeout and
every loop a bound.
"""

import html.parser
import json
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "Tests" / "Browser"))
import run as harness  # noqa: E402 - the browser tests' harness: Gatehouse, cleanups, log
from console import totp_code  # noqa: E402,F401 - RFC 6238 as an authenticator app computes it
from kaazing import hash_password  # noqa: E402 - `gatehouse hash-password --cost 4`

ACR_PASSWORD = "urn:gatehouse:acr:password"
ACR_MFA = "urn:gatehouse:acr:mfa"
ACR_PASSKEY = "urn:gatehouse:acr:passkey"
HTTP_TIMEOUT = 15
MAX_ROUNDS = 6
SCOPE_ALLOWED = "openid profile email offline_access"
USER, PASSWORD, DISPLAY_NAME, EMAIL = "john", "demo", "John Doe", "john@example.com"


@dataclass
class OpenIDClient:
    """One entry of the policy's openIDClients. `secret` None: a public client (PKCE S256 required)."""
    id: str
    redirect_uris: list
    secret: str = None
    post_logout_redirect_uris: list = field(default_factory=list)
    alg: str = "RS256"
    display_name: str = None
    secret_hash: str = None


def new_client_secret(gatehouse):
    """A new confidential client's secret and its bcrypt hash (`gatehouse hash-password --new-client-secret`)."""
    lines = subprocess.run([str(gatehouse), "hash-password", "--new-client-secret", "--cost", "4"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                           check=True).stdout.split()
    assert len(lines) == 2 and lines[1].startswith("$2"), f"hash-password --new-client-secret printed {lines!r}"
    return lines[0], lines[1]


def confidential(gatehouse, client_id, redirect_uris, **options):
    secret, secret_hash = new_client_secret(gatehouse)
    return OpenIDClient(client_id, redirect_uris, secret=secret, secret_hash=secret_hash, **options)


def policy(gatehouse, clients, passkey_origin=None):
    """The policy YAML: the demo's UserLogin and TOTP, each proving an authentication context, `clients`, and one
    MobileFirst application (a policy lists at least one). With `passkey_origin` (http://localhost:<port>: WebAuthn's
    relying party is a domain), also a Passkey check after UserLogin for the pages of that origin, proving
    urn:gatehouse:acr:passkey (level 3)."""
    q = json.dumps
    passkey_level = f", {q(ACR_PASSKEY)}: 3" if passkey_origin else ""
    lines = [
        "# Gatehouse as an OpenID Provider (Tests/OpenID/provider.py).",
        f'authenticationContexts: {{ {q(ACR_PASSWORD)}: 1, {q(ACR_MFA)}: 2{passkey_level} }}',
        "securityChecks:",
        f"  UserLogin: {{ class: UserLogin, acr: {q(ACR_PASSWORD)}, properties: {{ maxAttempts: 3, "
        "blockedStateExpirationSec: 60, successStateExpirationSec: 3600 } }",
        f"  TOTP: {{ class: TOTP, requires: [UserLogin], acr: {q(ACR_MFA)}, properties: {{ issuer: Gatehouse test, "
        "maxAttempts: 3, blockedStateExpirationSec: 60 } }",
    ]
    if passkey_origin:
        host = urllib.parse.urlsplit(passkey_origin).hostname
        lines.append(f"  Passkey: {{ class: Passkey, requires: [UserLogin], acr: {q(ACR_PASSKEY)}, properties: {{ "
                     f"rpID: {host}, origins: {q(passkey_origin)}, userVerification: required }} }}")
    lines.append("openIDClients:")
    for client in clients:
        lines.append(f"  - id: {q(client.id)}")
        lines.append(f"    displayName: {q(client.display_name or client.id)}")
        if client.secret_hash:
            lines.append(f"    secretHash: {q(client.secret_hash)}")
        lines.append(f"    redirectURIs: {q(client.redirect_uris)}")
        if client.post_logout_redirect_uris:
            lines.append(f"    postLogoutRedirectURIs: {q(client.post_logout_redirect_uris)}")
        lines.append(f"    allowedScope: {q(SCOPE_ALLOWED)}")
        lines.append("    scopeElementMapping: { openid: UserLogin }")
        lines.append(f"    idTokenSigningAlg: {client.alg}")
    lines += ["applications:",
              "  - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: UserLogin, transfers: TOTP } }"]
    john = hash_password(gatehouse, PASSWORD)
    jane = hash_password(gatehouse, "secret")
    lines += [
        "users:",
        f"  - {{ username: {USER}, displayName: {DISPLAY_NAME}, passwordHash: {q(john)}, "
        f"attributes: {{ email: {EMAIL} }} }}",
        f"  - {{ username: jane, displayName: Jane Roe, passwordHash: {q(jane)} }}",
    ]
    return "\n".join(lines) + "\n"


def start(gatehouse, folder, clients, start_timeout=30, port=0, issuer=None, passkey_origin=None):
    """`gatehouse serve` on `port` (0: a free one it picks) with the policy for `clients` (fresh data folder; a Passkey
    check for `passkey_origin` if given, see policy()), as `issuer` if given (--issuer), until the current cleanup
    scope ends; returns (the Gatehouse process, its discovery document)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    policy_path = folder / "policy.yaml"
    policy_path.write_text(policy(gatehouse, clients, passkey_origin), encoding="utf-8")
    server = harness.Gatehouse(gatehouse, folder / "data", folder / "gatehouse.log", start_timeout, policy=policy_path,
                               port=port, extra=["--issuer", issuer] if issuer else [])
    return server, discovery(server.url)


def discovery(base):
    import requests
    answer = requests.get(base + "/.well-known/openid-configuration", timeout=HTTP_TIMEOUT, allow_redirects=False)
    if answer.status_code != 200:
        raise RuntimeError(f"GET {base}/.well-known/openid-configuration answered {answer.status_code}: "
                           f"{answer.text[:300]}")
    return answer.json()


# ------------------------------------------------------------------------------------------------ the sign-in page

class SignInPage(html.parser.HTMLParser):
    """What the hosted sign-in page shows: its form's data-request and data-csrf, the checks (fieldsets) it asks,
    the TOTP secret to enrol, the error."""

    def __init__(self, text):
        super().__init__()
        self.form = None
        self.checks = []
        self.totp_secret = None
        self.error = None
        self.inputs = []
        self._capture = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and attrs.get("id") == "gatehouse-sign-in":
            self.form = attrs
        elif tag == "fieldset" and attrs.get("data-check"):
            self.checks.append(attrs["data-check"])
        elif tag == "input" and attrs.get("name"):
            self.inputs.append(attrs["name"])
        elif attrs.get("id") in ("gatehouse-totp-secret", "gatehouse-error"):
            self._capture = [attrs["id"], ""]

    def handle_data(self, data):
        if self._capture:
            self._capture[1] += data

    def handle_endtag(self, tag):
        if self._capture and tag in ("code", "p"):
            name, text = self._capture
            if name == "gatehouse-totp-secret":
                self.totp_secret = text.strip()
            else:
                self.error = text.strip()
            self._capture = None

    @property
    def request(self):
        return (self.form or {}).get("data-request")

    @property
    def csrf(self):
        return (self.form or {}).get("data-csrf")


class Refused(AssertionError):
    """Gatehouse answered something the flow did not expect; carries the request and the answer."""


def describe(answer):
    location = answer.headers.get("Location")
    return (f"{answer.request.method} {answer.request.url} -> {answer.status_code}"
            + (f" Location: {location}" if location else "")
            + (f" {answer.text[:400]!r}" if answer.text else ""))


class UserAgent:
    """A user agent without a browser: a requests.Session (it keeps `gatehouse_sid`) that opens the authorization URL
    and answers the hosted page's rounds as its script does (POST <issuer>/oidc/sign-in, JSON)."""

    def __init__(self, issuer):
        import requests
        self.issuer = issuer.rstrip("/")
        self.session = requests.Session()
        self.pages = []           # every SignInPage seen
        self.rounds = []          # (answers sent, JSON answer)
        self.recovery_codes = None
        self.asked = []           # the checks the last sign-in asked first

    def open(self, url):
        """GET `url` (not following redirects): ("redirect", Location) or ("page", SignInPage); else Refused."""
        answer = self.session.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
        if answer.status_code in (302, 303) and answer.headers.get("Location"):
            return "redirect", answer.headers["Location"]
        if answer.status_code == 200 and "text/html" in answer.headers.get("Content-Type", ""):
            page = SignInPage(answer.text)
            if not page.request or not page.csrf:
                raise Refused(f"the sign-in page has no form#gatehouse-sign-in with data-request and data-csrf: "
                              f"{describe(answer)}")
            self.pages.append(page)
            return "page", page
        raise Refused(f"the authorization request was answered neither by a redirect nor by the sign-in page: "
                      f"{describe(answer)}")

    def post_round(self, page, answers):
        answer = self.session.post(self.issuer + "/oidc/sign-in", json={"request": page.request, "csrf": page.csrf,
                                                                        "answers": answers},
                                   headers={"Origin": self.issuer}, allow_redirects=False, timeout=HTTP_TIMEOUT)
        if answer.status_code != 200 or "json" not in answer.headers.get("Content-Type", ""):
            raise Refused(f"sign-in round {json.dumps(answers)}: {describe(answer)}")
        value = answer.json()
        self.rounds.append((answers, value))
        return value

    def sign_in(self, page, respond):
        """Answers the page's rounds until Gatehouse gives the redirect, as the page's script does: its first round is
        sent on load with no answers (`{}`; or with the answers to fieldsets the page's HTML already shows), then each
        challenge is answered. `respond(check, challenge, secret)` gives the answer for a check (challenge: its JSON,
        None for a fieldset of the HTML; secret: the TOTP enrolment secret shown, if any), or None when it cannot be
        answered yet (left out of the first round). `self.asked`: the checks asked first (the fieldsets of the HTML,
        else the first round's challenges). Returns the redirect URL."""
        answers = {}
        for check in page.checks:
            answer = respond(check, None, page.totp_secret)
            if answer is not None:
                answers[check] = answer
        self.asked = list(page.checks)
        for number in range(MAX_ROUNDS):
            value = self.post_round(page, answers)
            if value.get("redirect"):
                self.recovery_codes = value.get("recoveryCodes")
                return value["redirect"]
            challenges = value.get("challenges") or {}
            if not challenges:
                raise Refused(f"sign-in round {json.dumps(answers)} answered neither a redirect nor challenges: "
                              f"{json.dumps(value)[:400]}")
            if number == 0 and not page.checks:
                self.asked = list(challenges)
            answers = {}
            for check, challenge in challenges.items():
                answer = respond(check, challenge, find_key(challenge, "secret") or page.totp_secret)
                if answer is not None:
                    answers[check] = answer
            if not answers:
                raise Refused(f"cannot answer the challenges {json.dumps(challenges)[:400]}")
        raise Refused(f"no redirect after {MAX_ROUNDS} sign-in rounds: {json.dumps(self.rounds)[:600]}")

    def authorize(self, url, respond=None):
        """Opens the authorization URL and signs in if the page asks: the redirect to the client (with its query)."""
        kind, value = self.open(url)
        if kind == "redirect":
            return value
        return self.sign_in(value, respond or password_only)


def find_key(value, name):
    """The first string under key `name` anywhere in a JSON value (the TOTP enrolment's secret in a challenge)."""
    if isinstance(value, dict):
        if isinstance(value.get(name), str):
            return value[name]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = find_key(item, name)
            if found:
                return found
    return None


def password_only(check, _challenge, _secret):
    if check != "UserLogin":
        raise Refused(f"the page asks {check}, where only the password was expected")
    return {"username": USER, "password": PASSWORD}


def password_and_totp(check, _challenge, secret):
    if check == "UserLogin":
        return {"username": USER, "password": PASSWORD}
    if check == "TOTP":
        return {"code": totp_code(secret)} if secret else None   # the enrolment secret comes with the challenge
    raise Refused(f"the page asks an unexpected check {check}")


def query(url):
    """The redirect's query parameters (one value each)."""
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))
