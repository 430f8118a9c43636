#!/usr/bin/env python3
"""Browser test of the web console (/console) in Debian's headless Chromium against a real `gatehouse serve`.

    python3 Tests/Browser/console.py [--gatehouse .build/debug/gatehouse] [--screenshots Tests/Browser/screenshots]
                                     [--verbose] [--keep]

Gatehouse runs the demo policy (as `gatehouse demo-policy` prints it, with its demo-only console administrator
demo-admin) plus `accountLockout: { threshold: 3 }`, on a free port with a fresh data folder. Python drives the
runtime protocol itself (RS256-signed registration, pre-authorization rounds, authorization code, token with a
client assertion) to make what an operator meets: a client blocked by wrong PINs, an account locked by wrong
passwords, some flows for the chart. The browser then, through the console only:

  sign-in          signs in as demo-admin and sees the dashboard's counts and chart
  unblock          finds the blocked client by its device, sees PinCodeAttempts blocked, unblocks it; the client then
                   gets a challenge again (401 MFP-Challenge), not a block (403)
  unlock           finds user:john among the locked accounts and unlocks it; john can then log in again
  policy-invalid   a policy edit with an error (an unknown check class) shows the error by key, and changes nothing
                   (the policy's version and PinCodeAttempts' maxAttempts stay)
  policy-applied   a good edit (PinCodeAttempts maxAttempts 3 -> 5) applies: the policy view shows 5
  revoke-delete    on a client with a token: Revoke makes the token answer 401; Delete asks again, then deletes
  navigation       keys, audit trail, registrations paging and sign-out work, Tab shows a focus ring, a refused token
                   signs out, and the browser saw no CSP violation
  read-only        signed in with gatehouse.admin.read only, the console offers no write action and hides the source

Screenshots of the dashboard, the client page and the policy editor, at desktop and phone width, go to the
screenshots folder (git-ignored). Every wait is bounded; scripts/browser-test runs this under a watchdog.
"""

import base64
import hashlib
import hmac
import http.client
import json
import re
import struct
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import run as harness  # noqa: E402 - the shared helpers of the SDK browser test (gatehouse, cleanup, browser)

ADMIN_ID, ADMIN_SECRET = "demo-admin", "demo-admin-secret"
APP, PLATFORM = "com.sample.pincodeswift", "ios"
REDIRECT = "https://mfpredirecturi"
HTTP_TIMEOUT = 15
WAIT = 15
PHONE = (390, 844)
DESKTOP = (1280, 900)
STEPS = ["sign-in", "unblock", "unlock", "policy-invalid", "policy-applied", "revoke-delete", "applications", "devices", "user-factors", "navigation",
         "read-only"]

log = harness.log


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# ------------------------------------------------------------------------------------------------ HTTP

class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body) if self.body else None

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"{self.status} {self.body[:300]!r}"


def request(base, method, path, body=None, headers=None):
    """One request, never following a redirect, bounded by HTTP_TIMEOUT."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=HTTP_TIMEOUT)
    try:
        data = body.encode() if isinstance(body, str) else body
        connection.request(method, path, body=data, headers=headers or {})
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode("utf-8", "replace"))
    finally:
        connection.close()


def post_json(base, path, value):
    return request(base, "POST", path, json.dumps(value), {"Content-Type": "application/json"})


def post_form(base, path, fields, headers=None):
    return request(base, "POST", path, urllib.parse.urlencode(fields),
                   dict({"Content-Type": "application/x-www-form-urlencoded"}, **(headers or {})))


def admin_token(base):
    basic = base64.b64encode(f"{ADMIN_ID}:{ADMIN_SECRET}".encode()).decode()
    answer = post_form(base, "/mfp/api/az/v1/token", {"grant_type": "client_credentials", "scope": "gatehouse.admin"},
                       {"Authorization": "Basic " + basic})
    assert answer.status == 200, f"admin token: {answer}"
    return answer.json()["access_token"]


def admin_get(base, token, path):
    answer = request(base, "GET", "/admin/v1" + path, headers={"Authorization": "Bearer " + token})
    assert answer.status == 200, f"GET {path}: {answer}"
    return answer.json()


# ------------------------------------------------------------------------------------------------ a runtime client

class RuntimeClient:
    """A MobileFirst client straight from the wire protocol: an RSA key, an RS256-signed registration, rounds."""

    def __init__(self, base, device, app=APP, platform=PLATFORM, key=None):
        from cryptography.hazmat.primitives.asymmetric import rsa
        self.base, self.device, self.app, self.platform = base, device, app, platform
        self.key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.client_id = None

    def jwk(self, kid=None):
        numbers = self.key.public_key().public_numbers()
        as_bytes = lambda value: value.to_bytes((value.bit_length() + 7) // 8, "big")  # noqa: E731
        jwk = {"kty": "RSA", "n": b64url(as_bytes(numbers.n)), "e": b64url(as_bytes(numbers.e))}
        if kid:
            jwk["kid"] = kid
        return jwk

    def sign(self, payload, kid=None):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        header = b64url(json.dumps({"alg": "RS256", "jwk": self.jwk(kid)}, separators=(",", ":")).encode())
        body = b64url(json.dumps(payload, separators=(",", ":")).encode())
        signature = self.key.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return header, body, b64url(signature)

    def register(self):
        data = {"device": {"id": self.device, "hardware": "Console test phone", "platform": "ios 18"},
                "application": {"id": self.app, "clientPlatform": self.platform, "version": "1.0"},
                "attributes": {"sdk_protocol_version": 1}}
        header, payload, signature = self.sign(data)
        answer = post_json(self.base, "/mfp/api/registration/v1/self",
                           {"signedRegistrationData": {"header": header, "payload": payload, "signature": signature}})
        assert answer.status == 201 and answer.header("location"), f"registration: {answer}"
        self.client_id = answer.header("location").rstrip("/").split("/")[-1]
        return self

    def preauthorize(self, scope, answers=None):
        body = {"client_id": self.client_id, "scope": scope}
        if answers is not None:
            body["challengeResponse"] = answers
        return post_json(self.base, "/mfp/api/preauth/v1/preauthorize", body)

    def token(self, scope):
        """Authorization code, then the token with a client assertion: a whole flow (its checks must grant)."""
        query = urllib.parse.urlencode({"response_type": "code", "client_id": self.client_id, "redirect_uri": REDIRECT,
                                        "scope": scope})
        authorization = request(self.base, "GET", "/mfp/api/az/v1/authorization?" + query)
        assert authorization.status == 302, f"authorization: {authorization}"
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(authorization.header("location")).query)["code"][0]
        now = int(time.time() * 1000)
        claims = {"iss": f"{self.app}${self.platform}", "sub": self.client_id, "aud": "az/v1/token", "iat": now,
                  "exp": now + 60000, "jti": code}
        assertion = ".".join(self.sign(claims, kid=self.client_id))
        answer = post_form(self.base, "/mfp/api/az/v1/token", {
            "grant_type": "authorization_code", "code": code, "client_id": self.client_id, "redirect_uri": REDIRECT,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion})
        assert answer.status == 200, f"token: {answer}"
        return answer.json()["access_token"]


# ------------------------------------------------------------------------------------------------ the browser side

class Console:
    """The console in Chromium: bounded waits on its DOM, screenshots at desktop and phone width."""

    def __init__(self, driver, base, screenshots):
        self.driver, self.base, self.screenshots = driver, base, screenshots
        self.console_lines = []

    def drain(self):
        try:
            for entry in self.driver.get_log("browser"):
                self.console_lines.append(f"{entry.get('level')}: {entry.get('message')}")
        except Exception as error:  # noqa: BLE001 - informational
            self.console_lines.append(f"(cannot read the console: {error!r})")

    def wait(self, condition, what, timeout=WAIT):
        from selenium.webdriver.support.ui import WebDriverWait
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(lambda driver: condition())
        except Exception as error:
            shown = self.error_text()
            try:
                name = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")[:60]
                self.driver.save_screenshot(str(self.screenshots / f"failure-{name}.png"))
            except Exception:  # noqa: BLE001 - diagnostics only
                pass
            raise AssertionError(f"waited {timeout} s for {what}" + (f"; the page shows: {shown}" if shown else "")
                                 + f" ({type(error).__name__})") from None

    def find(self, css):
        from selenium.webdriver.common.by import By
        found = self.driver.find_elements(By.CSS_SELECTOR, css)
        return found[0] if found else None

    def find_all(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def visible(self, css):
        element = self.find(css)
        try:
            return element if element is not None and element.is_displayed() else None
        except Exception:  # noqa: BLE001 - stale: redrawn meanwhile
            return None

    def text(self, css):
        element = self.find(css)
        try:
            return element.text if element is not None else ""
        except Exception:  # noqa: BLE001 - stale
            return ""

    def error_text(self):
        try:
            box = self.find("#error")
            return box.text if box is not None and box.is_displayed() else ""
        except Exception:  # noqa: BLE001
            return ""

    def go(self, hash_route, ready_css):
        self.driver.execute_script("location.hash = arguments[0]", hash_route)
        return self.wait(lambda: self.visible(ready_css), f"{hash_route} to show {ready_css}")

    def click(self, css):
        element = self.wait(lambda: self.visible(css), f"{css} to be visible")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def size(self, width, height, mobile):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def shoot(self, name):
        """Full-page screenshots at desktop and phone width (the page is redrawn by its own CSS, not scaled)."""
        shots = []
        for label, (width, height), mobile in (("desktop", DESKTOP, False), ("phone", PHONE, True)):
            self.size(width, height, mobile)
            time.sleep(0.4)
            full = self.driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
            overflow = self.driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            result = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(max(full, height), 6000), "scale": 1}})
            path = self.screenshots / f"{name}-{label}.png"
            path.write_bytes(base64.b64decode(result["data"]))
            shots.append(path)
            if overflow > 0:
                raise AssertionError(f"{name} at {label} width scrolls sideways by {overflow} px")
        self.size(*DESKTOP, False)
        log(f"INFO screenshots: {', '.join(str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path) for path in shots)}")


# ------------------------------------------------------------------------------------------------ the test

def totp_code(secret, at=None):
    """The RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret: what an authenticator app shows."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", int((time.time() if at is None else at) // 30)), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(struct.unpack('>I', mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def console_policy(gatehouse):
    demo = subprocess.run([str(gatehouse), "demo-policy"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert "id: demo-admin" in demo, "the demo policy has no demo-admin console client"
    return demo.rstrip() + "\n\naccountLockout: { threshold: 3, windowSec: 900, durationSec: 600 }\n"


def with_max_attempts(yaml, check, value):
    """The policy source with `check`'s maxAttempts set to `value` (the demo policy's layout)."""
    pattern = re.compile(rf"(\n  {re.escape(check)}:\n(?:    .*\n)*?      maxAttempts: )(\d+)")
    assert pattern.search(yaml), f"no maxAttempts of {check} in the policy source"
    return pattern.sub(lambda match: match.group(1) + str(value), yaml, count=1)


def run_steps(settings, results, folder):
    policy = folder / "policy.yaml"
    policy.write_text(console_policy(settings.gatehouse), encoding="utf-8")
    gatehouse = harness.Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout,
                                  policy=policy)
    base = gatehouse.url
    settings.logs.append(("gatehouse output", gatehouse.text))

    # What an operator meets: a blocked client, a locked account, some flows and failures for the chart.
    happy_clients = []
    for index in range(3):
        happy = RuntimeClient(base, f"console-happy-{index}").register()
        assert happy.preauthorize("accessRestricted", {"PinCodeAttempts": {"pin": "1234"}}).status == 200
        happy_clients.append((happy, happy.token("accessRestricted")))
    # Enough registrations for two pages of 25 (one key for all: only the registrations matter here).
    for index in range(20):
        RuntimeClient(base, f"console-filler-{index:02d}", key=happy_clients[0][0].key).register()
    # john enrols his authenticator app (the demo policy's TOTP after UserLogin) before the lockout below.
    enrolling = RuntimeClient(base, "console-totp-phone").register()
    login = enrolling.preauthorize("transfers", {"UserLogin": {"username": "john", "password": "demo"}})
    enrolment = ((login.json() or {}).get("challenges", {}).get("TOTP") or {}).get("enrolment")
    assert login.status == 401 and enrolment, f"no TOTP enrolment after john's login: {login}"
    enrolled = enrolling.preauthorize("transfers", {"TOTP": {"code": totp_code(enrolment["secret"])}})
    assert enrolled.status == 200, f"john's first code: {enrolled}"
    blocked = RuntimeClient(base, "console-blocked-device").register()
    statuses = [blocked.preauthorize("accessRestricted", {"PinCodeAttempts": {"pin": "0000"}}).status for _ in range(3)]
    assert statuses == [401, 401, 403], f"wrong PINs answered {statuses}"
    assert blocked.preauthorize("accessRestricted").status == 403, "the client is not blocked"
    for index in range(3):
        locker = RuntimeClient(base, f"console-login-{index}").register()
        locker.preauthorize("UserLogin", {"UserLogin": {"username": "john", "password": "wrong-password"}})
    admin = admin_token(base)
    locked = [entry["account"] for entry in admin_get(base, admin, "/accounts")["accounts"]]
    assert "user:john" in locked, f"john is not locked: {locked}"
    log(f"INFO set-up: client {blocked.client_id} blocked by wrong PINs, accounts locked {locked}, 3 flows done")

    folder_profile = folder / "chromium-profile"
    folder_profile.mkdir()
    driver = harness.start_browser(settings.chromium, settings.chromedriver, folder_profile, page_load_timeout=30,
                                   network_log=False)

    def quit_browser():
        service_process = getattr(driver.service, "process", None)
        try:
            driver.quit()
        finally:
            if service_process is not None and service_process.poll() is None:
                service_process.kill()
    harness.on_cleanup(quit_browser)
    ui = Console(driver, base, settings.screenshots)
    settings.logs.insert(0, ("browser console", lambda: (ui.drain(), "\n".join(ui.console_lines))[1]))
    ui.size(*DESKTOP, False)

    step = harness.step_runner(results)

    def sign_in():
        driver.get(base + "/console")
        ui.wait(lambda: ui.visible("#signin-form"), "the sign-in form")
        # A wrong secret first: the error is shown on the page, nothing else changes.
        ui.find("#signin-id").send_keys(ADMIN_ID)
        ui.find("#signin-secret").send_keys("not-the-secret")
        ui.click("#signin-submit")
        ui.wait(lambda: "wrong" in ui.error_text(), "the wrong-secret error")
        ui.find("#signin-id").clear()
        ui.find("#signin-id").send_keys(ADMIN_ID)
        ui.find("#signin-secret").clear()
        ui.find("#signin-secret").send_keys(ADMIN_SECRET)
        ui.click("#signin-submit")
        ui.wait(lambda: ui.visible("#stat-flows") and ui.visible("#activity-chart"), "the dashboard's counts and chart")
        stored = driver.execute_script("return JSON.parse(sessionStorage.getItem('gatehouse.console.session') || 'null')")
        assert stored and stored.get("token") and stored.get("client") == ADMIN_ID, "no session in sessionStorage"
        flows = ui.text("#stat-flows .value")
        failures, blocks = ui.text("#stat-failures .value"), ui.text("#stat-blocks .value")
        assert int(flows) >= 3 and int(failures) >= 2 and int(blocks) >= 1, f"counts {flows}/{failures}/{blocks}"
        drawn = {kind: len(ui.find_all(f"#activity-chart rect.bar.{kind}")) for kind in ("flows", "failures", "blocks")}
        assert all(drawn.values()), f"the chart lacks a series: {drawn}"
        ui.shoot("dashboard")
        return f"dashboard shows {flows} flows, {failures} failures, {blocks} blocks; token in sessionStorage"

    def unblock():
        ui.go("#/registrations", "#search-device")
        ui.find("#search-device").send_keys("console-blocked-device")
        ui.click("#search-submit")
        link_css = f'#registrations a[href="#/client/{blocked.client_id}"]'
        ui.wait(lambda: len(ui.find_all("#registrations tbody tr")) == 1 and ui.visible(link_css), "the search's one result")
        ui.click(link_css)
        state_css = '[data-check-state="PinCodeAttempts"]'
        ui.wait(lambda: ui.text(state_css) == "blocked", "PinCodeAttempts shown blocked")
        ui.shoot("client")
        ui.click('[data-reset="PinCodeAttempts"]')
        ui.wait(lambda: ui.text(state_css) not in ("", "blocked") and ui.visible("#notice"), "the check no longer blocked")
        shown = ui.text(state_css)
        answer = blocked.preauthorize("accessRestricted")
        assert answer.status == 401 and "MFP-Challenge" in (answer.header("www-authenticate") or ""), \
            f"after the unblock the client got {answer}"
        challenges = (answer.json() or {}).get("challenges", {})
        assert "PinCodeAttempts" in challenges, f"no PinCodeAttempts challenge: {answer}"
        right = blocked.preauthorize("accessRestricted", {"PinCodeAttempts": {"pin": "1234"}})
        assert right.status == 200, f"the right PIN after the unblock: {right}"
        return f"state now {shown}; the client's next round got 401 MFP-Challenge for PinCodeAttempts, then 200 with the PIN"

    def unlock():
        ui.go("#/accounts", '[data-unlock="user:john"]')
        ui.click('[data-unlock="user:john"]')
        ui.wait(lambda: "No account is locked." in ui.text("#accounts"), "the empty state after the unlock")
        ui.shoot("accounts-empty")
        john = RuntimeClient(base, "console-login-after").register()
        answer = john.preauthorize("UserLogin", {"UserLogin": {"username": "john", "password": "demo"}})
        assert answer.status == 200, f"john's login after the unlock: {answer}"
        return "user:john unlocked, the empty state shown, and john logs in again (200)"

    def policy_view_max(check):
        return ui.text(f'[data-max-attempts="{check}"]')

    def policy_invalid():
        ui.go("#/policy", "#policy-yaml")
        ui.wait(lambda: policy_view_max("PinCodeAttempts") == "3", "the policy view's PinCodeAttempts maxAttempts 3")
        before = admin_get(base, admin, "/policy/source")
        source = ui.find("#policy-yaml").get_attribute("value")
        assert source == before["yaml"], "the editor does not hold the policy in force"
        broken = source.replace("class: PinCodeAttempts", "class: NoSuchCheckClass", 1)
        broken = with_max_attempts(broken, "PinCodeAttempts", 7)
        driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                              ui.find("#policy-yaml"), broken)
        ui.click("#policy-apply")
        ui.wait(lambda: ui.visible("#policy-errors"), "the policy's errors")
        errors = ui.text("#policy-errors")
        assert "PinCodeAttempts" in errors and "NoSuchCheckClass" in errors, f"the errors shown: {errors}"
        after = admin_get(base, admin, "/policy/source")
        assert after["version"] == before["version"] and after["yaml"] == before["yaml"], "the bad policy changed something"
        assert policy_view_max("PinCodeAttempts") == "3"
        ui.shoot("policy-editor-error")
        return f"the error is shown ({' '.join(errors.split())[:160]}); version {after['version']} and maxAttempts 3 stay"

    def policy_applied():
        ui.click("#policy-reload")
        ui.wait(lambda: ui.visible("#policy-yaml") and not ui.visible("#policy-errors"), "the editor anew")
        source = ui.find("#policy-yaml").get_attribute("value")
        edited = with_max_attempts(source, "PinCodeAttempts", 5)
        driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                              ui.find("#policy-yaml"), edited)
        ui.click("#policy-validate")
        ui.wait(lambda: ui.visible("#policy-valid"), "the verdict valid")
        ui.click("#policy-apply")
        ui.wait(lambda: ui.visible("#policy-applied"), "the policy applied")
        ui.wait(lambda: policy_view_max("PinCodeAttempts") == "5", "the policy view's maxAttempts 5")
        served = admin_get(base, admin, "/policy")
        values = {check["name"]: check.get("maxAttempts") for app in served["applications"] for check in app["securityChecks"]}
        assert values.get("PinCodeAttempts") == 5, f"the API says {values}"
        ui.shoot("policy-editor")
        return f"{ui.text('#policy-applied')}; the policy view and GET /admin/v1/policy show maxAttempts 5"

    def navigation():
        # An error of the API is shown on the page with its code and message.
        ui.go("#/client/nobody-registered", "#page h1")
        ui.wait(lambda: "NOT_FOUND" in ui.error_text() and "nobody-registered" in ui.error_text(), "the API's 404 on the page")
        ui.go("#/keys", "#rotate")
        ui.wait(lambda: len(ui.find_all("#keys tbody tr")) == 1, "one signing key")
        ui.click("#rotate")
        ui.wait(lambda: len(ui.find_all("#keys tbody tr")) == 2, "two keys after a rotation")
        ui.shoot("keys")
        ui.go("#/audit", "#audit-next")
        ui.wait(lambda: len(ui.find_all("#audit tbody tr")) > 0, "audit events")
        first_page = len(ui.find_all("#audit tbody tr"))
        ui.shoot("audit")
        events = "admin.check.reset" in ui.text("#audit") or ui.find("#audit-next").is_enabled()
        assert events, "the audit trail shows neither the reset nor a next page"
        ui.go("#/registrations", "#search-clear")
        ui.click("#search-clear")
        ui.wait(lambda: len(ui.find_all("#registrations tbody tr")) == 25, "the first page of 25 registrations")
        first = [row.text for row in ui.find_all("#registrations tbody tr td.id")]
        ui.shoot("registrations")
        ui.click("#page-next")
        ui.wait(lambda: ui.text("#registrations caption").startswith("Page 2"), "the second page")
        second = [row.text for row in ui.find_all("#registrations tbody tr td.id")]
        assert second and not set(first) & set(second) and max(first) < min(second), "the pages overlap or are out of order"
        assert not ui.find("#page-next").is_enabled(), "a third page is offered"
        ui.click("#page-previous")
        ui.wait(lambda: ui.text("#registrations caption").startswith("Page 1"), "the first page again")
        registrations = len(first) + len(second)
        # Keyboard: from the top of the page, Tab reaches the skip link, then the console's own controls, each with a
        # visible focus ring.
        from selenium.webdriver.common.keys import Keys
        driver.refresh()   # a fresh page (the session stays: sessionStorage), focus at its start
        ui.wait(lambda: len(ui.find_all("#registrations tbody tr")) == 25, "the registrations after a reload")
        body = ui.find("body")
        rings = []
        for _ in range(4):
            body.send_keys(Keys.TAB) if not rings else driver.switch_to.active_element.send_keys(Keys.TAB)
            rings.append(driver.execute_script(
                "const e = document.activeElement; return [e.tagName + (e.id ? '#' + e.id : '') + ' ' + e.textContent.trim().slice(0, 20),"
                " e.matches(':focus-visible'), getComputedStyle(e).outlineStyle]"))
        assert rings[0][0].startswith("A") and "Skip" in rings[0][0], f"Tab first reached {rings[0]}"
        assert all(visible and style != "none" for _, visible, style in rings), f"focus not visible: {rings}"
        outline = ", ".join(name for name, _, _ in rings)
        # A token Gatehouse refuses (401) signs the console out, saying why.
        driver.execute_script("""
            const session = JSON.parse(sessionStorage.getItem('gatehouse.console.session'));
            session.token = 'not-a-token';
            sessionStorage.setItem('gatehouse.console.session', JSON.stringify(session));""")
        driver.refresh()
        ui.wait(lambda: ui.visible("#signin-form") and "sign in again" in ui.text("#notice"), "the sign-in form after a 401")
        assert driver.execute_script("return sessionStorage.getItem('gatehouse.console.session')") is None
        ui.find("#signin-id").send_keys(ADMIN_ID)
        ui.find("#signin-secret").send_keys(ADMIN_SECRET)
        ui.click("#signin-submit")
        ui.wait(lambda: ui.visible("#search-clear"), "the registrations page again after signing in")
        ui.click("#sign-out")
        ui.wait(lambda: ui.visible("#signin-form"), "the sign-in form after signing out")
        assert driver.execute_script("return sessionStorage.getItem('gatehouse.console.session')") is None
        ui.drain()
        violations = [line for line in ui.console_lines if "Content Security Policy" in line or "Refused to" in line]
        assert not violations, f"CSP violations: {violations}"
        # The refused sign-in (token endpoint), the 401 of the bad token: expected; nothing else.
        severe = [line for line in ui.console_lines if line.startswith("SEVERE") and "/admin/v1" not in line
                  and "/az/v1/token" not in line]
        assert not severe, f"browser errors: {severe}"
        return f"an unknown client's NOT_FOUND shown; keys rotated (2 listed), audit page of {first_page}, {registrations} registrations on two pages by the cursor, Tab reaches {outline} with a visible focus ring; a refused token (401) signs out; signed out; no CSP violation"

    def revoke_delete():
        client, token = happy_clients[0]
        balance = "/mfp/api/adapters/ResourceAdapter/balance"
        assert request(base, "GET", balance, headers={"Authorization": "Bearer " + token}).status == 200
        ui.go(f"#/client/{client.client_id}", "#revoke")
        ui.click("#revoke")
        ui.wait(lambda: "stops working" in ui.text("#notice"), "the revocation's notice")
        refused = request(base, "GET", balance, headers={"Authorization": "Bearer " + token})
        assert refused.status == 401, f"the revoked token still answers {refused}"
        ui.click("#delete")
        ui.wait(lambda: "Press again" in ui.text("#delete"), "the delete button asking again")
        assert admin_get(base, admin, "/registrations/" + client.client_id)["clientId"] == client.client_id, "deleted at once"
        ui.click("#delete")
        ui.wait(lambda: ui.visible("#search-clear") and "deleted" in ui.text("#notice"), "the registrations after the delete")
        gone = client.preauthorize("accessRestricted")
        assert gone.status in (400, 404) and "INVALID_CLIENT_ID" in gone.body, f"the deleted client got {gone}"
        return "the token answered 401 after Revoke; Delete asked again, then the client's next round got INVALID_CLIENT_ID"

    def applications():
        section = '[data-application="com.sample.pincodeswift/ios"]'
        ui.go("#/applications", section + " table")
        ui.wait(lambda: "1.0" in ui.text(section + " table") and "active" in ui.text(section + " table"),
                "version 1.0 listed active")
        driver.execute_script("arguments[0].value = '< 2.0'", ui.find(section + ' input[id$="-versions"]'))
        from selenium.webdriver.support.ui import Select
        Select(ui.find(section + ' select[id$="-status"]')).select_by_value("disabled")
        ui.find(section + ' input[id$="-message"]').send_keys("This version is retired.")
        ui.find(section + ' input[id$="-link"]').send_keys("https://apps.example.com/pincode")
        ui.click(section + ' button[id$="-add"]')
        ui.wait(lambda: "disabled" in ui.text(section) and "Version rules" in ui.text(section) and ui.visible("#notice"),
                "the rule listed and version 1.0 shown disabled")
        ui.shoot("applications")
        old = RuntimeClient(base, "console-old-version").register()
        refused = old.preauthorize("accessRestricted")
        failure = ((refused.json() or {}).get("failures") or {}).get("wl_remoteDisableRealm") or {}
        assert refused.status == 403 and failure.get("downloadLink") == "https://apps.example.com/pincode", \
            f"a 1.0 client after the rule: {refused}"
        remove = section + ' button[data-remove-rule]'
        ui.click(remove)
        ui.wait(lambda: "Press again" in ui.text(remove), "the remove button asking again")
        ui.click(remove)
        ui.wait(lambda: "every version is active" in ui.text(section), "no rule left")
        again = old.preauthorize("accessRestricted")
        assert again.status == 401, f"the 1.0 client after the rule was removed: {again}"
        return "version 1.0 listed; the rule < 2.0 disabled added from the page (a 1.0 client then refused with the link), then removed (served again)"

    def devices():
        phone = RuntimeClient(base, "console-lost-phone").register()
        assert phone.preauthorize("accessRestricted").status == 401, "the phone's first round: a PIN challenge"
        ui.go("#/devices", "#device-search-device")
        ui.find("#device-search-device").send_keys("console-lost-phone")
        ui.click("#device-search-submit")
        row = '[data-device="console-lost-phone"]'
        ui.wait(lambda: ui.find(row) is not None and "active" in ui.text(row), "the phone found, active")
        ui.click(row + " a")
        ui.wait(lambda: ui.find("#device-status-select") is not None, "the device page")
        from selenium.webdriver.support.ui import Select
        Select(ui.find("#device-status-select")).select_by_value("LOST")
        ui.click("#device-status-save")
        ui.wait(lambda: "lost" in ui.text("#device-status") and ui.visible("#notice"), "the device shown lost")
        ui.shoot("device")
        refused = phone.preauthorize("accessRestricted")
        failure = ((refused.json() or {}).get("failures") or {}).get("gatehouse_deviceAccess") or {}
        assert refused.status == 403 and failure.get("status") == "LOST", f"the lost phone's next round: {refused}"
        ui.click(f'[data-block="{APP}"]')
        ui.wait(lambda: "blocked on this device" in ui.text("#notice"), "the application blocked on the device")
        Select(ui.find("#device-status-select")).select_by_value("ACTIVE")
        ui.click("#device-status-save")
        ui.wait(lambda: "active" in ui.text("#device-status"), "the device shown active")
        still = phone.preauthorize("accessRestricted")
        blocked = ((still.json() or {}).get("failures") or {}).get("gatehouse_deviceAccess") or {}
        assert still.status == 403 and blocked.get("application") == APP, f"active, the application still blocked on it: {still}"
        ui.click(f'[data-block="{APP}"]')
        ui.wait(lambda: "allowed on this device again" in ui.text("#notice"), "the application unblocked")
        assert phone.preauthorize("accessRestricted").status == 401, "unblocked: the PIN challenge again"
        ui.go("#/devices", "#devices")
        ui.wait(lambda: ui.find(row) is not None, "the device list")
        ui.shoot("devices")
        ui.go("#/device/console-lost-phone", "#device-delete")
        ui.click("#device-delete")
        ui.wait(lambda: "Press again" in ui.text("#device-delete"), "the unregister button asking again")
        ui.click("#device-delete")
        ui.wait(lambda: "unregistered" in ui.text("#notice"), "the device unregistered")
        gone = phone.preauthorize("accessRestricted")
        assert gone.status == 400 and "INVALID_CLIENT_ID" in gone.body, f"the unregistered phone's next round: {gone}"
        return "found by device id; set LOST from its page (its next round refused with status LOST); the application blocked on it alone (refused while the device was active again), unblocked (challenged again); unregistered (INVALID_CLIENT_ID)"

    def user_factors():
        ui.go("#/users", "#user-search-name")
        ui.find("#user-search-name").send_keys("john")
        ui.click("#user-search-submit")
        ui.wait(lambda: ui.find('[data-reset-factor="TOTP"]') is not None, "john's page with his TOTP factor")
        row = ui.text('[data-factor="TOTP"]')
        assert "TOTP" in row and "10" in row, f"the factor's row: {row}"
        assert enrolment["secret"] not in ui.text("#user"), "the secret is shown"
        ui.shoot("user")
        ui.click('[data-reset-factor="TOTP"]')
        ui.wait(lambda: "Press again" in ui.text('[data-reset-factor="TOTP"]'), "the reset button asking again")
        ui.click('[data-reset-factor="TOTP"]')
        ui.wait(lambda: "No second factor enrolled" in ui.text("#user"), "the empty state after the reset")
        assert admin_get(base, admin, "/users/john")["factors"] == [], "john still has a factor"
        again = RuntimeClient(base, "console-totp-new-phone").register()
        answer = again.preauthorize("transfers", {"UserLogin": {"username": "john", "password": "demo"}})
        new = ((answer.json() or {}).get("challenges", {}).get("TOTP") or {}).get("enrolment") or {}
        assert new.get("secret") and new["secret"] != enrolment["secret"], f"no new enrolment after the reset: {answer}"
        return "john found by name: TOTP with 10 recovery codes left, no secret shown; reset (asked twice); his next login enrols a new secret"

    def read_only():
        ui.wait(lambda: ui.visible("#signin-form"), "the sign-in form")
        ui.find("#signin-id").send_keys(ADMIN_ID)
        ui.find("#signin-secret").send_keys(ADMIN_SECRET)
        ui.click('input[name="scope"][value="gatehouse.admin.read"]')
        ui.click("#signin-submit")
        ui.wait(lambda: "(read only)" in ui.text("#who-name"), "the read-only session")
        ui.go(f"#/client/{blocked.client_id}", '[data-reset="PinCodeAttempts"]')
        disabled = [css for css in ('[data-reset="PinCodeAttempts"]', "#revoke", "#delete") if not ui.find(css).is_enabled()]
        assert len(disabled) == 3, f"write actions enabled for a reader: only {disabled} disabled"
        ui.go("#/keys", "#rotate")
        assert not ui.find("#rotate").is_enabled(), "rotate enabled for a reader"
        ui.go("#/policy", "#policy-editor p")
        ui.wait(lambda: "gatehouse.admin session" in ui.text("#policy-editor"), "the editor's read-only note")
        assert ui.find("#policy-yaml") is None, "the policy source shown to a reader"
        ui.click("#sign-out")
        ui.wait(lambda: ui.visible("#signin-form"), "the sign-in form after signing out")
        return "reset, revoke, delete and rotate disabled; the policy source not offered"

    for name, function in (("sign-in", sign_in), ("unblock", unblock), ("unlock", unlock),
                           ("policy-invalid", policy_invalid), ("policy-applied", policy_applied),
                           ("revoke-delete", revoke_delete), ("applications", applications), ("devices", devices),
                           ("user-factors", user_factors),
                           ("navigation", navigation),
                           ("read-only", read_only)):
        if name != "sign-in" and results.get("sign-in", ("fail",))[0] != "pass":
            results[name] = ("fail", "not run: the sign-in failed")
            continue
        step(name, function)


def main():
    settings = harness.standalone_settings(__doc__, keep_help="keep the work folder (logs, data, profile, policy)")
    if settings is None:
        return 2
    try:
        import cryptography  # noqa: F401
    except ImportError:
        log("FAIL setup: the python cryptography package is missing (pip install cryptography)")
        return 2
    return harness.run_standalone(run_steps, settings, folder="gatehouse-console-", heading="console",
                                  title="console browser test", label="console", steps=STEPS,
                                  note=f"; screenshots in {settings.screenshots}")


if __name__ == "__main__":
    harness.run_main(main)
