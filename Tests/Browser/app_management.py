"""Application management in the browser (issue 38): the unmodified MobileFirst web SDK against `gatehouse serve`
while an operator changes com.sample.web's status through the admin API (PUT /admin/v1/policy), page by page in one
Chromium profile (one registered client):

  builtin    notify; a fresh profile whose page keeps the SDK's built-in wl_remoteDisableRealm handler: what happens is
             reported (info). This SDK build's built-in handler calls WL.Client.getMessageID, WL.SimpleDialog and
             WL.Client.__handleOnRemoteDisableDenial, which the web SDK does not define, so it cannot show a dialog.
  notify     the page's own handler (MobileFirst's documented customization) gets {message, messageId, messageType:
             NOTIFY} once, answers {messageId}, the PIN is asked, a token comes; the next token comes without the notice.
  disabled   handleFailure({message, downloadLink}); obtainAccessToken fails; no other check asks anything.
  enabled    the status removed: a token, the handler not called (john logs in: UserLogin).
  devices    john logs in on a second device (a second profile); the operator finds the first by user (GET
             /admin/v1/devices?user=john, before the second logged in) and marks it LOST (PUT /admin/v1/devices/{id}):
             its balance request fails with the gatehouse_deviceAccess failure {status: LOST}, no PIN asked; the second
             device of the same user still reads the balance.

Run by Tests/Browser/run.py (mode app-management), which passes itself as `harness`.
"""
import base64
import json
import urllib.parse

STEPS = ["notify-once-then-token", "notify-not-on-next-token", "disabled-handleFailure-with-link", "enabled-again-token",
         "second-device-login", "lost-device-refused", "other-device-of-the-user-served"]
WEB_APPLICATION = "  - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: PinCodeAttempts, transfers: TOTP } }"
NOTICE = "Maintenance tonight from 22:00 to 23:00."
RETIRED = "This version of the app is retired: please upgrade."
LINK = "https://apps.example.com/sample-web"


def policy(demo, versions):
    """The demo policy with `versions` (a YAML flow list, or None) on com.sample.web."""
    assert demo.count(WEB_APPLICATION) == 1, "the demo policy's web application line changed"
    return demo if versions is None else demo.replace(WEB_APPLICATION, WEB_APPLICATION[:-2] + f", versions: {versions} }}")


def apply(harness, gatehouse, yaml):
    """PUT /admin/v1/policy as the demo's administrator."""
    import console   # its HTTP helpers and the demo administrator's token
    token = console.admin_token(gatehouse.url)
    answer = console.request(gatehouse.url, "PUT", "/admin/v1/policy", yaml, {"Authorization": "Bearer " + token,
                                                                               "Content-Type": "application/yaml"})
    assert answer.status == 200, f"PUT /admin/v1/policy: {answer}"
    harness.log(f"INFO [app-management] policy version {answer.json().get('version')} applied")


def admin(gatehouse, method, path, body=None):
    """An admin API call as the demo's administrator; the answer's JSON."""
    import console
    token = console.admin_token(gatehouse.url)
    headers = {"Authorization": "Bearer " + token}
    if body is not None:
        headers["Content-Type"] = "application/json"
        body = json.dumps(body)
    answer = console.request(gatehouse.url, method, path, body, headers)
    assert answer.status == 200, f"{method} {path}: {answer}"
    return answer.json()


def mode(harness, settings, run, folder):
    import subprocess
    demo = subprocess.run([str(settings.gatehouse), "demo-policy"], capture_output=True, text=True, timeout=30, check=True).stdout
    gatehouse = harness.Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout)
    run.logs.append(("gatehouse output", gatehouse.text))
    proxy_log = harness.ProxyLog(folder / "proxy.log")
    harness.on_cleanup(proxy_log.close)
    origin = harness.start_server(harness.make_proxy_handler(gatehouse, settings.sdk, proxy_log))
    run.logs.insert(0, ("proxy log", proxy_log.text))

    def page(browser, page_mode, **parameters):
        query = urllib.parse.urlencode(dict(mode=page_mode, **parameters))
        done, fatal = browser.run_page(f"{origin}/app/index.html?{query}", settings.page_timeout, run.label, run.steps)
        run.check_page(done, fatal, settings.page_timeout, f"the {page_mode} page")

    notify = f'[{{ status: notify, message: "{NOTICE}" }}]'
    apply(harness, gatehouse, policy(demo, notify))
    builtin = harness.Browser(settings, folder / "chromium-builtin")
    run.logs.insert(0, ("browser console (built-in handler)", harness.console_log(builtin)))
    page(builtin, "builtin")

    browser = harness.Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", harness.console_log(browser)))
    page(browser, "notify", message=NOTICE)
    apply(harness, gatehouse, policy(demo, f'[{{ status: disabled, message: "{RETIRED}", downloadLink: "{LINK}" }}]'))
    page(browser, "disabled", message=RETIRED, link=LINK)
    apply(harness, gatehouse, policy(demo, None))
    page(browser, "enabled")

    # Devices: the first profile is john's only device so far; a second profile is another device of his.
    devices = admin(gatehouse, "GET", "/admin/v1/devices?user=john&application=com.sample.web")["devices"]
    assert len(devices) == 1, f"john should have one device before the second logs in: {devices}"
    lost = devices[0]["id"]
    second = harness.Browser(settings, folder / "chromium-second-device")
    run.logs.insert(0, ("browser console (second device)", harness.console_log(second)))
    page(second, "device-login")
    both = admin(gatehouse, "GET", "/admin/v1/devices?user=john&application=com.sample.web")["devices"]
    assert len(both) == 2, f"john should have two devices: {both}"
    marked = admin(gatehouse, "PUT", "/admin/v1/devices/" + urllib.parse.quote(lost, safe=""), {"status": "LOST"})
    assert marked["status"] == "LOST", marked
    harness.log(f"INFO [app-management] device {lost} marked LOST")
    page(browser, "device-lost")
    page(second, "device-active")
    run.check_steps(STEPS)
