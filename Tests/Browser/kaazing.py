#!/usr/bin/env python3
"""Browser test: the KAAZING JavaScript client 5.0.0-4, unmodified, in headless Chromium, through `gatehouse gateway`.

    python3 Tests/Browser/kaazing.py [--gatehouse .build/debug/gatehouse] [--mode direct|nginx|splitting-relay|both|all]
                                     [--verbose] [--keep] [--fault drop-last-piece|no-split|bypass]

A WebSocket echo upstream (Python's `websockets`, selecting the sub-protocol `chat` when offered) behind a real
`gatehouse gateway --port 0` with four services: /open (no realm), /basic (realm "Basic Realm", scheme Basic) and
/appbasic (realm "Application Realm", scheme Application Basic), both realms requiring the role AUTHORIZED (joe/welcome
has it, ann/secret does not), and /idle (no realm, a 1 s inactivityTimeout: the client, which always asks
x-kaazing-idle-timeout and x-kaazing-ping-pong, must stay open through 2.5 s of silence — it fails when the gateway
ignores the client's answers to its extended PINGs), each allowing only the page's origin. A static server (no forwarding) serves the page Tests/Browser/app/kaazing.html and the
client under /sdk/; the page opens each service with the client's WebSocketFactory and BasicChallengeHandler, every
step reported as `PASS [kaazing] step: …`; then the same through KAAZING's emulated transport (forced with
`javascript:wse://`: its bridge frame, create, downstream and upstream requests). Then the gateway's /metrics must show what the page says happened: each
connection to a realm challenged once without credentials, then the passwords the loginHandler gave (right, wrong,
without the role) decided by the realm's login chain. In the nginx mode, all of it again with Debian's nginx in front
of the gateway, configured with the KAAZING guide's own snippet (Examples/nginx/gateway.conf).

In the splitting-relay mode (issue 53: an emulated upload whose body came in a later read than its head went
unanswered), the page knows only the address of Tests/Browser/splitting_relay.py, a TCP relay in front of the gateway
that writes each request's head, then its body in up to five pieces, pausing between writes so that they arrive as
separate reads. Through it the client, forced onto the emulated transport, opens /basic and then /appbasic (each
challenged once, joe's password) and sends a short text, 96 KiB of text, every byte value as a binary message and a
text of every code point 0-255, each echoed as sent, then closes. Then: the realms' decisions as the page's; every
emulated upload (POST …/;e/ub… or …/;e/utm…) the relay relayed was split, one per message at least, one over
64 KiB; and the gateway (its /metrics read through the relay too) accepted no connection the relay did not make.
`--fault` breaks the relay or bypasses it, to show that the mode then fails. All modes by default.
"""

import argparse
import asyncio
import atexit
import re
import signal
import subprocess
import tempfile
import threading
import urllib.request
from pathlib import Path

import fixtures
import nginx
import run as browser_test
import splitting_relay
from splitting_relay import SplittingRelay
from run import Browser, ModeRun, log, on_cleanup, run_cleanups, start_server, make_proxy_handler

REQUIRED_STEPS = [
    "open-service-echoes",
    "basic-password-reaches-loginHandler-and-opens",
    "basic-wrong-password-refused-after-retry-limit",
    "application-basic-password-reaches-loginHandler-and-opens",
    "application-basic-wrong-password-refused-after-retry-limit",
    "user-without-the-role-fails",
    "idle-timeout-negotiated-and-kept-alive",
    "emulated-open-service-echoes",
    "emulated-basic-password-reaches-loginHandler-and-opens",
    "emulated-application-basic-wrong-password-refused-after-retry-limit",
    "emulated-user-without-the-role-fails",
]
# What the gateway must have counted (gatehouse_gateway_authentications_total{realm, result}) after the page: each
# connection's first request inside the handshake carries no credentials (a challenge), then the loginHandler's.
# The emulated steps add, through their create requests: basic one challenge and one success; appbasic two challenges,
# two failures and one refusal for the role.
EXPECTED_AUTHENTICATIONS = {
    ("basic", "challenge"): 3, ("basic", "success"): 2, ("basic", "failure"): 2,
    ("appbasic", "challenge"): 5, ("appbasic", "success"): 1, ("appbasic", "failure"): 4, ("appbasic", "forbidden"): 2,
}
# The splitting-relay mode: the emulated transport only, through SplittingRelay, on both realms (kaazing.js's
# runSplit: each session challenged once, opened, four messages echoed, closed).
SPLIT_REQUIRED_STEPS = [
    "split-basic-challenged-opened-echoed",
    "split-application-basic-challenged-opened-echoed",
]
SPLIT_EXPECTED_AUTHENTICATIONS = {
    ("basic", "challenge"): 1, ("basic", "success"): 1, ("basic", "failure"): 0,
    ("appbasic", "challenge"): 1, ("appbasic", "success"): 1, ("appbasic", "failure"): 0, ("appbasic", "forbidden"): 0,
}
SPLIT_MESSAGES = 4          # per session (kaazing.js's splitMessages), each its own upload
LARGE_MESSAGE = 64 * 1024   # one of them over this (96 KiB of text)
BANNER = re.compile(r"Gatehouse gateway listens on http://([^\s:]+):(\d+)")


class EchoUpstream:
    """A WebSocket echo on a free loopback port, in a thread of its own, until the cleanup scope ends."""

    def __init__(self, log_path):
        import logging
        import websockets
        handler = logging.FileHandler(log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger = logging.getLogger("websockets")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        self.log_path = log_path
        self.port = None
        ready = threading.Event()
        self.loop = asyncio.new_event_loop()

        async def echo(connection, *_):
            async for message in connection:
                await connection.send(message)

        async def main():
            self.stop_event = asyncio.Event()
            def select(_connection, offered):
                return "chat" if "chat" in offered else None  # none offered: no sub-protocol

            async with websockets.serve(echo, "127.0.0.1", 0, select_subprotocol=select) as server:
                self.port = next(iter(server.sockets)).getsockname()[1]
                ready.set()
                await self.stop_event.wait()

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(main()), daemon=True)
        self.thread.start()
        if not ready.wait(15):
            raise RuntimeError("the echo upstream did not start")
        on_cleanup(self.stop)

    def stop(self):
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(5)


def hash_password(gatehouse, password):
    return subprocess.run([str(gatehouse), "hash-password", "--cost", "4"], input=password + "\n", capture_output=True,
                          text=True, timeout=30, check=True).stdout.strip()


def gateway_configuration(gatehouse, upstream_port, page_origin, trusted_proxies=()):
    joe = hash_password(gatehouse, "welcome")
    ann = hash_password(gatehouse, "secret")
    users = (f'[{{ username: joe, passwordHash: "{joe}", roles: [AUTHORIZED] }}, '
             f'{{ username: ann, passwordHash: "{ann}", roles: [GUEST] }}]')
    upstream = f"http://127.0.0.1:{upstream_port}"
    trusted = f"trustedProxies: [{', '.join(trusted_proxies)}]\n" if trusted_proxies else ""
    return f"""host: 127.0.0.1
port: 0
{trusted}realms:
  - name: basic
    description: Basic Realm
    scheme: Basic
    loginModules: [{{ type: users, flag: required, users: {users} }}]
  - name: appbasic
    description: Application Realm
    scheme: Application Basic
    loginModules: [{{ type: users, flag: required, users: {users} }}]
services:
  - {{ name: open, path: /open, upstream: "{upstream}/", webSocket: true, allowedOrigins: ["{page_origin}"] }}
  - {{ name: basic, path: /basic, upstream: "{upstream}/", realm: basic, requireRoles: [AUTHORIZED], webSocket: true,
       allowedOrigins: ["{page_origin}"] }}
  - {{ name: appbasic, path: /appbasic, upstream: "{upstream}/", realm: appbasic, requireRoles: [AUTHORIZED], webSocket: true,
       allowedOrigins: ["{page_origin}"] }}
  - {{ name: idle, path: /idle, upstream: "{upstream}/", webSocket: true, allowedOrigins: ["{page_origin}"], inactivityTimeout: 1 }}
"""


class GatewayProcess(browser_test.ServerProcess):
    def __init__(self, binary, config, log_path, start_timeout):
        command = [str(binary), "gateway", "--config", str(config), "--port", "0", "--log-level", "debug"]
        super().__init__(command, log_path, start_timeout, BANNER, name="the gateway")
        self.port = int(self.banner.group(2))
        log(f"gateway listens on 127.0.0.1:{self.port} (pid {self.process.pid})")

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as response:
            return response.read().decode()


def authentications(metrics):
    counts = {}
    pattern = re.compile(r'^gatehouse_gateway_authentications_total\{([^}]*)\} (\d+)', re.MULTILINE)
    for labels, value in pattern.findall(metrics):
        named = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        counts[(named.get("realm"), named.get("result"))] = int(value)
    return counts


def check_authentications(run, gateway_metrics, expected):
    """The step gateway-counted-what-the-page-did: the realms' decisions the gateway counted are `expected`."""
    counted = authentications(gateway_metrics)
    wrong = {key: (counted.get(key, 0), want) for key, want in expected.items() if counted.get(key, 0) != want}
    step = "gateway-counted-what-the-page-did"
    run.required.append(step)
    detail = ", ".join(f"{realm}/{result} {counted.get((realm, result), 0)}" for realm, result in expected)
    if wrong:
        run.steps[step] = ("fail", True, detail)
        run.fail(f"failed step {step}", f"{step}: " + "; ".join(f"{realm}/{result} counted {got}, expected {want}"
                                                                 for (realm, result), (got, want) in wrong.items()))
    else:
        run.steps[step] = ("pass", True, detail)
        log(f"PASS [{run.label}] {step}: {detail}")


def check(run, step, problems, detail):
    """A step of the Python side: passes when `problems` is empty."""
    run.required.append(step)
    if problems:
        run.steps[step] = ("fail", True, detail)
        run.fail(f"failed step {step}", f"{step}: {'; '.join(problems)} ({detail})")
    else:
        run.steps[step] = ("pass", True, detail)
        log(f"PASS [{run.label}] {step}: {detail}")


def kaazing_split_run(settings, run, folder):
    """The splitting-relay mode: the client forced onto the emulated transport, the gateway reached only through
    SplittingRelay (each request's head, then its body in pieces, as separate reads)."""
    client = fixtures.client("kaazing-javascript-client")
    echo = EchoUpstream(folder / "echo.log")
    log(f"echo upstream on 127.0.0.1:{echo.port}; KAAZING client from {client}")
    run.logs.append(("echo upstream log (Python websockets)", lambda: echo.log_path.read_text(encoding="utf-8")))
    static_log = browser_test.ProxyLog(folder / "static.log")
    on_cleanup(static_log.close)
    origin = start_server(make_proxy_handler(None, client, static_log))
    run.logs.append(("static server log", static_log.text))
    config = folder / "gateway.yaml"
    config.write_text(gateway_configuration(settings.gatehouse, echo.port, origin), encoding="utf-8")
    gateway = GatewayProcess(settings.gatehouse, config, folder / "gateway.log", settings.start_timeout)
    run.logs.append(("gateway output", gateway.text))
    relay_fault = settings.fault if settings.fault in splitting_relay.FAULTS else None
    relay = SplittingRelay(gateway.port, folder / "relay.log", fault=relay_fault)
    on_cleanup(relay.stop)
    run.logs.insert(0, ("splitting relay log", lambda: (folder / "relay.log").read_text(encoding="utf-8")))
    log(f"splitting relay listens on 127.0.0.1:{relay.port}, forwarding to the gateway on 127.0.0.1:{gateway.port}"
        + (f" (fault: {settings.fault}, to show this mode fails)" if settings.fault else ""))
    # The page knows only the relay's address ("bypass", a fault to show the check below fails, gives it the gateway's).
    address = f"127.0.0.1:{gateway.port if settings.fault == 'bypass' else relay.port}"

    browser = Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", browser_test.console_log(browser)))
    page = f"{origin}/app/kaazing.html?gateway=ws://{address}&suite=split"
    done, fatal = browser.run_page(page, settings.page_timeout, run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    run.check_steps(SPLIT_REQUIRED_STEPS)

    # The metrics through the relay too: every connection the gateway accepted must have been one the relay made.
    with urllib.request.urlopen(f"http://127.0.0.1:{relay.port}/metrics", timeout=10) as response:
        metrics = response.read().decode()
    check_authentications(run, metrics, SPLIT_EXPECTED_AUTHENTICATIONS)
    words, counts = relay.summary()
    log(f"splitting relay: {words}")
    accepted = re.search(r"^gatehouse_gateway_connections_total(?:\{\})? (\d+)", metrics, re.MULTILINE)
    accepted = int(accepted.group(1)) if accepted else None
    creates = [record for record in relay.snapshot() if re.search(r"/;e/c[a-z]*(\?|$)", record.path)]
    problems = []
    if accepted is None:
        problems.append("the gateway's metrics show no gatehouse_gateway_connections_total")
    elif accepted > relay.upstream_connections:
        problems.append(f"the gateway accepted {accepted} connections, the relay made {relay.upstream_connections}: "
                        "some traffic bypassed the relay")
    if len(creates) < 2:
        problems.append(f"{len(creates)} emulated creates (…/;e/c…) through the relay, expected at least 2")
    expected_uploads = SPLIT_MESSAGES * len(SPLIT_REQUIRED_STEPS)
    if counts["uploads"] < expected_uploads:
        problems.append(f"{counts['uploads']} emulated uploads (POST …/;e/ub… or …/;e/ut…) through the relay, "
                        f"expected at least {expected_uploads} (one per message)")
    if counts["uploads_split"] != counts["uploads"]:
        problems.append(f"only {counts['uploads_split']} of {counts['uploads']} emulated uploads split into several writes")
    if counts["largest_upload"] <= LARGE_MESSAGE:
        problems.append(f"no emulated upload over {LARGE_MESSAGE} bytes (largest {counts['largest_upload']})")
    check(run, "relay-split-every-emulated-upload", problems,
          f"{words}; {len(creates)} creates; the gateway accepted {accepted} connections, the relay made "
          f"{relay.upstream_connections}")


def kaazing_nginx_run(settings, run, folder):
    kaazing_run(settings, run, folder, behind_nginx=True)


def kaazing_run(settings, run, folder, behind_nginx=False):
    client = fixtures.client("kaazing-javascript-client")
    echo = EchoUpstream(folder / "echo.log")
    log(f"echo upstream on 127.0.0.1:{echo.port}; KAAZING client from {client}")
    run.logs.append(("echo upstream log (Python websockets)", lambda: echo.log_path.read_text(encoding="utf-8")))
    static_log = browser_test.ProxyLog(folder / "static.log")
    on_cleanup(static_log.close)
    origin = start_server(make_proxy_handler(None, client, static_log))
    run.logs.append(("static server log", static_log.text))
    # The page's origin is the only one the services allow (natively and through the emulation's bridge frame).
    config = folder / "gateway.yaml"
    config.write_text(gateway_configuration(settings.gatehouse, echo.port, origin,
                                            trusted_proxies=["127.0.0.1"] if behind_nginx else []), encoding="utf-8")
    gateway = GatewayProcess(settings.gatehouse, config, folder / "gateway.log", settings.start_timeout)
    run.logs.append(("gateway output", gateway.text))
    address = f"127.0.0.1:{gateway.port}"
    if behind_nginx:
        # Debian's nginx with the KAAZING guide's own snippet (Examples/nginx/gateway.conf) in front of the gateway.
        proxy = nginx.Nginx(folder / "nginx", nginx.snippet("gateway.conf", address))
        on_cleanup(proxy.stop)
        address = f"127.0.0.1:{proxy.port}"
        log(f"nginx listens on {proxy.url} (the KAAZING guide's gateway snippet, forwarding to 127.0.0.1:{gateway.port})")
        run.logs.insert(0, ("nginx access log", proxy.access_log))
        run.logs.append(("nginx error log", proxy.error_log))

    browser = Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", browser_test.console_log(browser)))
    page = f"{origin}/app/kaazing.html?gateway=ws://{address}"
    done, fatal = browser.run_page(page, settings.page_timeout, run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    run.check_steps(REQUIRED_STEPS)

    check_authentications(run, gateway.metrics(), EXPECTED_AUTHENTICATIONS)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=str(browser_test.REPO / ".build/debug/gatehouse"))
    parser.add_argument("--chromium", default=None)
    parser.add_argument("--chromedriver", default=None)
    parser.add_argument("--page-timeout", type=float, default=150)
    parser.add_argument("--start-timeout", type=float, default=30)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument("--mode", choices=("direct", "nginx", "splitting-relay", "both", "all"), default="all",
                        help="the gateway reached directly, behind Debian's nginx (Examples/nginx/gateway.conf), "
                             "through the splitting relay (emulated only), both of the first two, or all three")
    parser.add_argument("--fault", choices=splitting_relay.FAULTS + ("bypass",), default=None,
                        help="splitting-relay mode only, to show that it fails: the relay drops each emulated upload's "
                             "last piece, or splits nothing, or the page is given the gateway's own address")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, browser_test._terminate)
    signal.signal(signal.SIGHUP, browser_test._terminate)
    atexit.register(run_cleanups)

    settings = browser_test.Settings()
    settings.verbose = args.verbose
    settings.page_timeout = args.page_timeout
    settings.start_timeout = args.start_timeout
    settings.fault = args.fault
    settings.gatehouse = Path(args.gatehouse).absolute()
    settings.chromium = browser_test.find_executable(args.chromium, ["chromium", "chromium-browser", "google-chrome"])
    settings.chromedriver = browser_test.find_executable(args.chromedriver, ["chromedriver"])
    if not settings.chromium or not settings.chromedriver:
        log("FAIL setup: chromium or chromedriver not found (apt-get install chromium chromium-driver)")
        return 2
    try:
        fixtures.client("kaazing-javascript-client")
    except fixtures.FixtureError as error:
        log(f"FAIL setup: {error}")
        return 2
    settings.work = Path(tempfile.mkdtemp(prefix="gatehouse-kaazing-"))
    if args.keep:
        log(f"work folder: {settings.work}")
    else:
        import shutil
        on_cleanup(lambda: shutil.rmtree(settings.work, ignore_errors=True))

    modes = {"direct": [("kaazing", kaazing_run, REQUIRED_STEPS)],
             "nginx": [("kaazing-nginx", kaazing_nginx_run, REQUIRED_STEPS)],
             "splitting-relay": [("kaazing-splitting-relay", kaazing_split_run, SPLIT_REQUIRED_STEPS)]}
    modes["both"] = modes["direct"] + modes["nginx"]
    modes["all"] = modes["both"] + modes["splitting-relay"]
    selected = modes[args.mode]
    results = [browser_test.run_mode(function, settings, label, required) for label, function, required in selected]
    summary = ", ".join(f"{result.summary()} ({result.elapsed:.1f} s)" for result in results)
    failed = [result for result in results if result.problems]
    if failed:
        log(f"\nKAAZING browser test FAILED: {summary} (" + "; ".join(f"[{r.label}] {', '.join(r.problems)}" for r in failed) + ")")
        return 1
    log(f"\nKAAZING browser test passed: {summary}")
    return 0


if __name__ == "__main__":
    browser_test.run_main(main)
