"""Second factors in the browser (issue 41): the unmodified MobileFirst web SDK answers Gatehouse's TOTP and Passkey
checks with an app's own handlers (Tests/Browser/app/second-factors.js), in Chromium with a virtual authenticator
(WebDriver's WebAuthn extension: CTAP2, internal transport, user verification) standing in for the phone's.

The page is served same-origin through the test proxy at http://localhost:<port> — WebAuthn's relying party is the
host `localhost` (an IP address cannot be one) — and Gatehouse runs the demo policy plus a Passkey check for that
origin, mapped to scope `payments` of com.sample.web (the demo maps `transfers` to TOTP after UserLogin).

Run by Tests/Browser/run.py (mode second-factors), which passes itself as `harness`.
"""
import subprocess
import types

STEPS = ["totp-enrol", "totp-recovery-code", "passkey-register", "passkey-sign-in"]
WEB_APPLICATION = "  - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: PinCodeAttempts, transfers: TOTP } }"


def policy(demo, origin):
    """The demo policy with a Passkey check for `origin` (after UserLogin), mapped to `payments` on com.sample.web."""
    assert demo.count(WEB_APPLICATION) == 1, "the demo policy's web application line changed"
    passkey = ("  Passkey:\n    class: Passkey\n    requires: [UserLogin]\n"
               f"    properties: {{ rpID: localhost, origins: \"{origin}\", userVerification: required }}\n\n")
    yaml = demo.replace(WEB_APPLICATION, WEB_APPLICATION[:-4] + ", payments: Passkey } }")
    return yaml.replace("\napplications:\n", "\n" + passkey + "applications:\n", 1)


def mode(harness, settings, run, folder):
    # The proxy first: its port is in the policy's origin. It forwards to Gatehouse once that has started.
    upstream = types.SimpleNamespace(host=None, port=None)
    proxy_log = harness.ProxyLog(folder / "proxy.log")
    harness.on_cleanup(proxy_log.close)
    origin = harness.start_server(harness.make_proxy_handler(upstream, settings.sdk, proxy_log)).replace("127.0.0.1", "localhost")
    run.logs.insert(0, ("proxy log", proxy_log.text))
    demo = subprocess.run([str(settings.gatehouse), "demo-policy"], capture_output=True, text=True, timeout=30, check=True).stdout
    policy_path = folder / "policy.yaml"
    policy_path.write_text(policy(demo, origin), encoding="utf-8")
    gatehouse = harness.Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout, policy=policy_path)
    run.logs.append(("gatehouse output", gatehouse.text))
    upstream.host, upstream.port = gatehouse.host, gatehouse.port
    harness.log(f"proxy listens on {origin}, forwarding to {gatehouse.url} (demo policy + Passkey for {origin})")

    browser = harness.Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", harness.console_log(browser)))
    browser.add_authenticator()
    done, fatal = browser.run_page(f"{origin}/app/second-factors.html", settings.page_timeout, run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    credentials = browser.driver.get_credentials()
    assert len(credentials) == 1, f"the virtual authenticator holds {len(credentials)} credentials, expected 1"
    harness.log(f"INFO [{run.label}] the virtual authenticator holds 1 credential for rp {credentials[0].rp_id}, "
                f"sign count {credentials[0].sign_count}")
    run.check_steps(STEPS)
