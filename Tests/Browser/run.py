#!/usr/bin/env python3
"""Browser test: the official, unmodified IBM MobileFirst 8.0 web SDK in headless Chromium against `gatehouse serve`.

    python3 Tests/Browser/run.py [--gatehouse .build/debug/gatehouse] [--sdk ../shared/clients/ibm-mfp-web-sdk]
                                 [--mode same-origin|cross-origin|nginx|app-management|second-factors|both|all]
                                 [--verbose] [--keep]

Five modes run one after the other (by default all; exit status 0 only if every required step of each passed). Each
has its own `gatehouse serve --port 0` (fresh data folder) and its own Chromium profile (fresh --user-data-dir, so no
client id, key pair or token leaks from one mode into the other). The page runs the steps of Tests/Browser/app/test.js
and reports each in the DOM; this script prints them as `PASS [mode] step: …`.

same-origin   The documented set-up of a MobileFirst web app: a proxy serves /app/ (the test page) and /sdk/ (the
              SDK) and forwards everything else verbatim to Gatehouse (demo policy); the SDK's context root is /mfp.
nginx         The same behind Debian's nginx with the MobileFirst guide's snippet (Examples/nginx/mfp-same-origin.conf), which
              rewrites Host as proxy_pass does; Gatehouse runs with --trusted-proxy 127.0.0.1.
app-management  com.sample.web notified, disabled and enabled again by an operator (admin API) between pages of one
              profile: the page's own wl_remoteDisableRealm handler sees the NOTIFY challenge once and the disabled
              failure with its download link (Tests/Browser/app_management.py).
second-factors  The TOTP and Passkey checks answered by an app's own handlers through the SDK, in Chromium with a
              virtual authenticator, the page at http://localhost:<port> (Tests/Browser/second_factors.py).
cross-origin  The page comes from a static server (origin A, no forwarding) and talks to Gatehouse directly: the SDK
              is initialised with the absolute context root http://127.0.0.1:<gatehouse>/mfp, so every call is a
              preflighted CORS request. Gatehouse runs the demo policy with `allowedOrigins: [origin A]` on
              com.sample.web. The same steps must pass. Then the same page from a second static server (origin B,
              not allowed) must fail to register (step foreign-origin-refused): no token within a few seconds, the
              browser's network log shows the registration refused (CORS) or answered 403, and Gatehouse logged no
              new registration.

On failure (or with --verbose) it prints the browser console and the request logs: in same-origin mode the proxy's
(every request the SDK sent and what the server answered), in cross-origin mode the browser's own network log
(preflights included, from Chromium's performance log).
"""

import argparse
import atexit
import errno
import http.client
import http.server
import json
import mimetypes
import os
import re
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
from pathlib import Path

import app_management
import fixtures
import nginx
import second_factors

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
APP_DIR = HERE / "app"

REQUIRED_STEPS = [
    "captcha-wrong-then-right",
    "token-again-no-challenge",
    "pin-resource-request",
    "userlogin",
    "logout-then-challenged",
    "pin-blocked-handleFailure",
]
FORBIDDEN_STEP = "foreign-origin-refused"
MODES = ("same-origin", "cross-origin", "nginx", "app-management", "second-factors")
FORBIDDEN_PAGE_TIMEOUT = 30      # the page itself gives up waiting for a token after 8 s
REGISTERED = re.compile(r"Registered client (\S+)")

WEB_APPLICATION = "  - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: PinCodeAttempts, transfers: TOTP } }"


def cross_origin_policy(gatehouse, allowed_origin):
    """The demo policy (as `gatehouse demo-policy` prints it) with `allowedOrigins: [allowed_origin]` on the
    com.sample.web application."""
    demo = subprocess.run([str(gatehouse), "demo-policy"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert demo.count(WEB_APPLICATION) == 1, "the demo policy's web application line changed"
    return demo.replace(WEB_APPLICATION, WEB_APPLICATION[:-2] + f', allowedOrigins: ["{allowed_origin}"] }}')

BANNER = re.compile(r"Gatehouse listens on (http://[^\s]+)")
HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "proxy-connection",
}
BODY_LOG_LIMIT = 1500
FIELD_LOG_LIMIT = 700


def log(message):
    print(message, flush=True)


# ------------------------------------------------------------------------------------------------ cleanup

_cleanups = []
_cleanup_lock = threading.Lock()


def on_cleanup(function):
    _cleanups.append(function)


def cleanup_mark():
    """Where the cleanups registered from now on start; run_cleanups(mark) undoes only those."""
    with _cleanup_lock:
        return len(_cleanups)


def run_cleanups(down_to=0):
    with _cleanup_lock:
        while len(_cleanups) > down_to:
            function = _cleanups.pop()
            try:
                function()
            except Exception as error:  # noqa: BLE001 - cleanup must go on
                log(f"(cleanup: {error!r})")


def _terminate(signum, _frame):
    log(f"interrupted by signal {signum}: stopping the browser, the servers and gatehouse")
    raise SystemExit(128 + signum)


# ------------------------------------------------------------------------------------------------ gatehouse

class ServerProcess:
    """A `gatehouse` process (`serve` or `gateway`) until the current cleanup scope ends: its output kept and logged
    to `log_path`, started once `banner` (a regex) appears in it; `self.banner` is that match."""

    def __init__(self, command, log_path, start_timeout, banner, name="gatehouse"):
        self.output = []
        self.log_file = open(log_path, "w", encoding="utf-8")
        self.banner = None
        self._pattern = banner
        self._ready = threading.Event()
        log(f"starting: {' '.join(command)}")
        busy_until = time.monotonic() + start_timeout
        while True:
            try:
                self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, text=True, errors="replace")
                break
            except OSError as error:
                # ETXTBSY: a build is writing the binary right now; wait for the linker to finish.
                if error.errno != errno.ETXTBSY or time.monotonic() > busy_until:
                    raise
                log("(the gatehouse binary is being written by a build; waiting)")
                time.sleep(2)
        on_cleanup(self.stop)
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + start_timeout
        while not self._ready.wait(0.1):
            if self.process.poll() is not None:
                raise RuntimeError(f"{name} exited with status {self.process.returncode} before listening:\n"
                                   + "".join(self.output))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} printed no banner within {start_timeout} s:\n" + "".join(self.output))

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line)
            self.log_file.write(line)
            self.log_file.flush()
            if self.banner is None:
                match = self._pattern.search(line)
                if match:
                    self.banner = match
                    self._ready.set()

    def text(self):
        return "".join(self.output).rstrip()

    def stop(self):
        fixtures.terminate(self.process)
        self.log_file.close()


class Gatehouse(ServerProcess):
    def __init__(self, binary, data_dir, log_path, start_timeout, policy=None, extra=(), port=0):
        command = [str(binary), "serve", "--port", str(port), "--data", str(data_dir)]
        if policy is not None:
            command += ["--policy", str(policy), "--sample-adapter", "true"]
        command += list(extra)
        super().__init__(command, log_path, start_timeout, BANNER)
        self.url = self.banner.group(1).rstrip("/")
        parsed = urllib.parse.urlsplit(self.url)
        self.host, self.port = parsed.hostname, parsed.port
        log(f"gatehouse listens on {self.url} (pid {self.process.pid})")

    def registrations(self):
        """The client ids Gatehouse logged as registered so far."""
        return [match.group(1) for line in list(self.output) for match in [REGISTERED.search(line)] if match]


# ------------------------------------------------------------------------------------------------ proxy

class ProxyLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.counter = 0
        self.entries = []      # (number, method, path, status)
        self.file = open(path, "w", encoding="utf-8")

    def next_number(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def add(self, number, method, path, status, block):
        with self.lock:
            self.entries.append((number, method, path, status))
            if not self.file.closed:
                self.file.write(block + "\n")
                self.file.flush()

    def text(self):
        with self.lock:
            if not self.file.closed:
                self.file.flush()
        return Path(self.path).read_text(encoding="utf-8")

    def close(self):
        with self.lock:
            self.file.close()


def clip(text, limit):
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def describe_body(headers, body):
    """The body as logged: form fields decoded one per line, JSON or text as is, clipped."""
    if not body:
        return []
    content_type = (headers.get("Content-Type") or "").lower()
    text = body.decode("utf-8", errors="replace")
    if "application/x-www-form-urlencoded" in content_type:
        lines = [f"    raw ({len(body)} bytes): {clip(text, 300)}"]
        for key, value in urllib.parse.parse_qsl(text, keep_blank_values=True):
            lines.append(f"    {key} = {clip(value, FIELD_LOG_LIMIT)}")
        return lines
    return [f"    {clip(text, BODY_LOG_LIMIT)}"]


def make_proxy_handler(gatehouse, sdk_dir, proxy_log, upstream_timeout=30):
    """/app/ and /sdk/ from disk; everything else forwarded to `gatehouse`, or 404 when it is None (static only)."""
    roots = {"/app/": APP_DIR.resolve(), "/sdk/": Path(sdk_dir).resolve()}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "GatehouseBrowserTestProxy"

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def do_GET(self):
            self.handle_any()

        do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = do_GET

        def read_body(self):
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def handle_any(self):
            number = proxy_log.next_number()
            started = time.monotonic()
            body = self.read_body()
            path_only = urllib.parse.urlsplit(self.path).path
            for prefix, root in roots.items():
                if path_only.startswith(prefix):
                    status = self.serve_file(root, path_only[len(prefix):])
                    proxy_log.add(number, self.command, self.path, status,
                                  f"#{number} {self.command} {self.path} -> {status} (static)")
                    return
            if gatehouse is None:
                self.send_plain(404, b"not found (static server, nothing is forwarded)\n")
                proxy_log.add(number, self.command, self.path, 404,
                              f"#{number} {self.command} {self.path} -> 404 (static server, not forwarded)")
                return
            self.forward(number, started, body)

        def serve_file(self, root, relative):
            target = (root / urllib.parse.unquote(relative)).resolve()
            if root not in target.parents or not target.is_file():
                self.send_plain(404, b"not found\n")
                return 404
            data = target.read_bytes()
            content_type = mimetypes.guess_type(str(target))[0] or "application/octet-stream"
            if content_type.startswith("text/") or content_type in ("application/javascript", "application/json"):
                content_type += "; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            return 200

        def send_plain(self, status, data):
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def forward(self, number, started, body):
            lines = [f"#{number} {self.command} {self.path}"]
            unquoted = urllib.parse.unquote_plus(self.path)
            if unquoted != self.path:
                lines.append(f"    (decoded: {clip(unquoted, FIELD_LOG_LIMIT)})")
            for name in ("Content-Type", "Authorization"):
                if self.headers.get(name):
                    lines.append(f"    > {name}: {clip(self.headers.get(name), 120)}")
            lines += describe_body(self.headers, body)
            status = 502
            try:
                connection = http.client.HTTPConnection(gatehouse.host, gatehouse.port, timeout=upstream_timeout)
                try:
                    connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for name, value in self.headers.items():
                        if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                            connection.putheader(name, value)
                    if body or self.command in ("POST", "PUT", "PATCH"):
                        connection.putheader("Content-Length", str(len(body)))
                    connection.endheaders(body if body else None)
                    response = connection.getresponse()
                    answer = response.read()
                    status = response.status
                    self.send_response_only(response.status, response.reason)
                    for name, value in response.getheaders():
                        if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(answer)
                finally:
                    connection.close()
                elapsed = (time.monotonic() - started) * 1000
                lines[0] += f" -> {status} {response.reason} ({elapsed:.0f} ms)"
                for name, value in response.getheaders():
                    if name.lower() in ("www-authenticate", "location", "content-type", "mfp-conflict"):
                        lines.append(f"    < {name}: {value}")
                if answer:
                    lines.append(f"    < {clip(answer.decode('utf-8', errors='replace'), BODY_LOG_LIMIT)}")
            except Exception as error:  # noqa: BLE001 - reported to the browser and the log
                lines[0] += f" -> proxy error {error!r}"
                try:
                    self.send_plain(502, f"proxy error: {error!r}\n".encode())
                except Exception:  # noqa: BLE001 - the browser went away
                    pass
            proxy_log.add(number, self.command, self.path, status, "\n".join(lines))

    return Handler


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def start_server(handler):
    """Serves on a free loopback port until the current cleanup scope ends; returns its origin."""
    server = ProxyServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()
    on_cleanup(stop)
    return f"http://127.0.0.1:{server.server_address[1]}"


# ------------------------------------------------------------------------------------------------ browser

def find_executable(explicit, names):
    if explicit:
        return explicit
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


class NetworkLog:
    """The browser's own view of its requests (preflights included), from Chromium's performance log."""

    SHOWN_HEADERS = ("access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers",
                     "access-control-expose-headers", "www-authenticate", "location")

    def __init__(self):
        self.entries = []          # dicts in the order the requests started
        self._by_id = {}
        self._sent_headers = {}    # requestId -> the headers really sent (Origin included), which may come first

    def add(self, message):
        method = message.get("method", "")
        params = message.get("params", {})
        request_id = params.get("requestId")
        if method == "Network.requestWillBeSentExtraInfo":
            headers = {k.lower(): v for k, v in (params.get("headers") or {}).items()}
            if request_id in self._by_id:
                self._by_id[request_id]["headers"].update(headers)
            else:
                self._sent_headers[request_id] = headers
        elif method == "Network.requestWillBeSent":
            redirect = params.get("redirectResponse")
            if redirect and request_id in self._by_id:
                self._respond(self._by_id[request_id], redirect)
            request = params.get("request", {})
            if not request.get("url", "").startswith("http"):
                return
            entry = {"number": len(self.entries) + 1, "type": params.get("type") or "", "method": request.get("method"),
                     "url": request.get("url"), "headers": {k.lower(): v for k, v in request.get("headers", {}).items()},
                     "post": request.get("postData"), "status": None, "response_headers": {}, "error": None}
            entry["headers"].update(self._sent_headers.pop(request_id, {}))
            self.entries.append(entry)
            self._by_id[request_id] = entry
        elif method == "Network.responseReceived" and request_id in self._by_id:
            self._respond(self._by_id[request_id], params.get("response", {}))
        elif method == "Network.loadingFailed" and request_id in self._by_id:
            entry = self._by_id[request_id]
            error = params.get("errorText") or "failed"
            cors = params.get("corsErrorStatus") or {}
            if cors.get("corsError"):
                error += f" (CORS error {cors['corsError']}" + \
                         (f", {cors['failedParameter']}" if cors.get("failedParameter") else "") + ")"
            if params.get("blockedReason"):
                error += f" (blocked: {params['blockedReason']})"
            entry["error"] = error

    @staticmethod
    def _respond(entry, response):
        entry["status"] = response.get("status")
        entry["response_headers"] = {k.lower(): v for k, v in (response.get("headers") or {}).items()}

    def since(self, mark):
        return self.entries[mark:]

    @staticmethod
    def outcome(entry):
        if entry["error"]:
            return ("status " + str(entry["status"]) + ", then " if entry["status"] else "") + entry["error"]
        return str(entry["status"]) if entry["status"] is not None else "no answer seen"

    def lines(self, entries=None):
        lines = []
        for entry in self.entries if entries is None else entries:
            if entry["method"] == "OPTIONS" and "access-control-request-method" in entry["headers"]:
                kind = " [preflight]"
            else:
                kind = f" [{entry['type']}]" if entry["type"] not in ("", "XHR", "Fetch") else ""
            lines.append(f"#{entry['number']}{kind} {entry['method']} {entry['url']} -> {self.outcome(entry)}")
            if entry["headers"].get("origin"):
                lines.append(f"    > Origin: {entry['headers']['origin']}")
            for name in ("access-control-request-method", "access-control-request-headers", "content-type",
                         "authorization"):
                if entry["headers"].get(name):
                    lines.append(f"    > {name}: {clip(entry['headers'][name], 120)}")
            if entry["post"]:
                lines.append(f"    > {clip(entry['post'], 300)}")
            for name in self.SHOWN_HEADERS:
                if name in entry["response_headers"]:
                    lines.append(f"    < {name}: {clip(str(entry['response_headers'][name]), 200)}")
        return lines


def start_browser(chromium, chromedriver, profile_dir, page_load_timeout, network_log):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={profile_dir}", "--no-first-run", "--no-default-browser-check",
                     "--disable-extensions", "--disable-background-networking", "--window-size=1200,900"):
        options.add_argument(argument)
    prefs = {"browser": "ALL"}
    if network_log:
        prefs["performance"] = "ALL"
        options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
    options.set_capability("goog:loggingPrefs", prefs)
    service = Service(executable_path=chromedriver)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(page_load_timeout)
    driver.set_script_timeout(10)
    return driver


class Browser:
    """Headless Chromium with a fresh profile, until the current cleanup scope ends."""

    def __init__(self, settings, profile_dir, network_log=False):
        profile_dir.mkdir()
        self.driver = start_browser(settings.chromium, settings.chromedriver, profile_dir, page_load_timeout=30,
                                    network_log=network_log)
        on_cleanup(self.quit)
        self.console = []
        self.network = NetworkLog() if network_log else None
        caps = self.driver.capabilities
        log(f"browser: {caps.get('browserName')} {caps.get('browserVersion')} (profile {profile_dir.name})")

    def quit(self):
        service_process = getattr(self.driver.service, "process", None)
        try:
            self.driver.quit()
        finally:
            if service_process is not None and service_process.poll() is None:
                service_process.kill()

    def add_authenticator(self):
        """A virtual authenticator standing in for the phone's (WebDriver's WebAuthn extension): CTAP2, internal
        transport, resident keys, user verification, the user verified and consenting."""
        from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
        options = VirtualAuthenticatorOptions()
        options.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
        options.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
        options.has_resident_key = True
        options.has_user_verification = True
        options.is_user_verified = True
        options.is_user_consenting = True
        self.driver.add_virtual_authenticator(options)

    def drain(self):
        try:
            for entry in self.driver.get_log("browser"):
                self.console.append(f"{entry.get('level')}: {entry.get('message')}")
        except Exception as error:  # noqa: BLE001 - informational
            self.console.append(f"(cannot read the console: {error!r})")
        if self.network is None:
            return
        try:
            for entry in self.driver.get_log("performance"):
                self.network.add(json.loads(entry["message"]).get("message", {}))
        except Exception as error:  # noqa: BLE001 - informational
            self.console.append(f"(cannot read the performance log: {error!r})")

    def run_page(self, url, timeout, label, steps, held=()):
        """Opens `url` and waits (at most `timeout` s) for the page to finish; records its steps into `steps`
        (name -> (result, required, detail)) and prints them, except those in `held`. Returns (done, fatal)."""
        self.console.append(f"---- {url}")
        log(f"[{label}] opening {url}")
        self.driver.get(url)
        deadline = time.monotonic() + timeout
        while True:
            self.drain()
            state = self.driver.execute_script(STATE_SCRIPT)
            for name, result, required, detail in self.driver.execute_script(STEPS_SCRIPT):
                if name not in steps:
                    steps[name] = (result, required == "true", detail)
                    if name not in held:
                        tag = {"pass": "PASS", "fail": "FAIL"}.get(result, "INFO")
                        log(f"{tag} [{label}] {name}: {detail}")
            if state[0] == "true":
                self.drain()
                return True, state[1]
            if time.monotonic() > deadline:
                self.drain()
                return False, None
            time.sleep(0.3)


STEPS_SCRIPT = """
return Array.prototype.map.call(document.querySelectorAll('li[data-step]'), function (li) {
    return [li.dataset.step, li.dataset.result, li.dataset.required, li.textContent];
});
"""
STATE_SCRIPT = "return document.body ? [document.body.dataset.done || null, document.body.dataset.fatal || null] : [null, null];"


# ------------------------------------------------------------------------------------------------ modes

class ModeRun:
    """The outcome of one mode: its steps, its problems and the logs to show when it fails."""

    def __init__(self, label, required):
        self.label = label
        self.required = list(required)
        self.steps = {}
        self.problems = []
        self.logs = []             # (title, function returning the text)
        self.started = time.monotonic()
        self.elapsed = 0.0

    def fail(self, problem, line=None):
        self.problems.append(problem)
        log(f"FAIL [{self.label}] {line or problem}")

    def check_page(self, done, fatal, timeout, what="the page"):
        if fatal:
            self.fail(f"fatal: {fatal}")
        elif not done:
            self.fail(f"{what} did not finish within {timeout:.0f} s", f"timeout: {what} did not finish within {timeout:.0f} s")

    def check_steps(self, names):
        for name in names:
            if name not in self.steps:
                self.fail(f"missing step {name}", f"{name}: missing (the page never reported it)")
            elif self.steps[name][0] != "pass":
                self.problems.append(f"failed step {name}")

    def passed_count(self):
        return sum(1 for name in self.required if self.steps.get(name, ("",))[0] == "pass")

    def summary(self):
        return f"{self.label} {self.passed_count()}/{len(self.required)}"

    def dump(self):
        dump_logs(self.label, self.logs)


def dump_logs(label, logs, tail=None):
    """Prints each (title, function returning the text) of `logs` under a `[label] title` heading; with `tail`, only
    the last `tail` characters of each."""
    for title, text in logs:
        log(f"\n================ [{label}] {title} ================")
        try:
            shown = text().rstrip()
            log(shown[-tail:] if tail else shown)
        except Exception as error:  # noqa: BLE001 - diagnostics only
            log(f"(unavailable: {error!r})")


def run_mode(function, settings, label, required):
    """Runs one mode in its own cleanup scope (its servers, gatehouse and browser stop when it ends)."""
    run = ModeRun(label, required)
    folder = settings.work / label
    folder.mkdir()
    mark = cleanup_mark()
    log(f"\n---------------- {label} ----------------")
    try:
        function(settings, run, folder)
    except SystemExit:
        raise
    except Exception as error:  # noqa: BLE001 - reported as a failure
        run.fail(f"fatal: {type(error).__name__}: {error}")
    finally:
        run.elapsed = time.monotonic() - run.started
        if run.problems or settings.verbose:
            run.dump()
        run_cleanups(mark)
    return run


def console_log(browser):
    return lambda: "\n".join(browser.console)


def same_origin_mode(settings, run, folder):
    gatehouse = Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout)
    run.logs.append(("gatehouse output", gatehouse.text))
    proxy_log = ProxyLog(folder / "proxy.log")
    on_cleanup(proxy_log.close)
    origin = start_server(make_proxy_handler(gatehouse, settings.sdk, proxy_log))
    log(f"proxy listens on {origin} (SDK from {settings.sdk}; everything else forwarded to {gatehouse.url})")
    run.logs.insert(0, ("proxy log (requests through the same-origin proxy)", proxy_log.text))

    browser = Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", console_log(browser)))
    done, fatal = browser.run_page(f"{origin}/app/index.html", settings.page_timeout, run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    run.check_steps(REQUIRED_STEPS)

    uploads = [entry for entry in proxy_log.entries if "loguploader" in entry[2]]
    if uploads:
        statuses = ", ".join(str(entry[3]) for entry in uploads)
        log(f"INFO [{run.label}] analytics: {len(uploads)} POST(s) to /mfp/api/loguploader observed (status {statuses})")
    else:
        log(f"INFO [{run.label}] analytics: no /mfp/api/loguploader posts observed")


def nginx_mode(settings, run, folder):
    """Same origin behind Debian's nginx configured with the MobileFirst guide's own snippet (Examples/nginx/mfp-same-origin.conf):
    nginx's proxy_pass sends Gatehouse `Host: 127.0.0.1:<gatehouse's port>`, not the page's host, so the same-origin
    test holds only because Gatehouse trusts the proxy's X-Forwarded-Host (`--trusted-proxy 127.0.0.1`)."""
    gatehouse = Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout,
                          extra=["--trusted-proxy", "127.0.0.1"])
    run.logs.append(("gatehouse output", gatehouse.text))
    body = nginx.snippet("mfp-same-origin.conf", f"{gatehouse.host}:{gatehouse.port}")
    body += (f"\n        location /app/ {{ alias {APP_DIR.resolve()}/; add_header Cache-Control no-store; }}"
             f"\n        location /sdk/ {{ alias {settings.sdk}/; }}\n")
    proxy = nginx.Nginx(folder / "nginx", body)
    on_cleanup(proxy.stop)
    log(f"nginx listens on {proxy.url} (the MobileFirst guide's /mfp/ snippet, forwarding to {gatehouse.url})")
    run.logs.insert(0, ("nginx access log", proxy.access_log))
    run.logs.append(("nginx error log", proxy.error_log))

    browser = Browser(settings, folder / "chromium-profile")
    run.logs.insert(0, ("browser console", console_log(browser)))
    done, fatal = browser.run_page(f"{proxy.url}/app/index.html", settings.page_timeout, run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    run.check_steps(REQUIRED_STEPS)


def cross_origin_mode(settings, run, folder):
    # Origin A's port goes into the policy, so the static servers start first.
    static_logs = {}
    origins = {}
    for name in ("A", "B"):
        static_logs[name] = ProxyLog(folder / f"static-{name}.log")
        on_cleanup(static_logs[name].close)
        origins[name] = start_server(make_proxy_handler(None, settings.sdk, static_logs[name]))
    log(f"static servers (no forwarding): origin A {origins['A']} (allowed), origin B {origins['B']} (not allowed)")
    policy = folder / "policy.yaml"
    policy.write_text(cross_origin_policy(settings.gatehouse, origins["A"]), encoding="utf-8")

    gatehouse = Gatehouse(settings.gatehouse, folder / "data", folder / "gatehouse.log", settings.start_timeout,
                          policy=policy)
    browser = Browser(settings, folder / "chromium-profile", network_log=True)
    run.logs += [("browser console", console_log(browser)),
                 ("network log (the browser's requests, from Chromium's performance log)",
                  lambda: "\n".join(browser.network.lines())),
                 ("static server A log", static_logs["A"].text), ("static server B log", static_logs["B"].text),
                 ("policy (" + str(policy.name) + ")", lambda: policy.read_text(encoding="utf-8")),
                 ("gatehouse output", gatehouse.text)]
    server = urllib.parse.quote(gatehouse.url, safe="")

    # Origin A (allowed): the same six steps, every SDK call a CORS request to Gatehouse.
    done, fatal = browser.run_page(f"{origins['A']}/app/index.html?server={server}", settings.page_timeout,
                                   run.label, run.steps)
    run.check_page(done, fatal, settings.page_timeout)
    run.check_steps(REQUIRED_STEPS)
    uploads = [entry for entry in browser.network.entries
               if "loguploader" in entry["url"] and entry["method"] == "POST"]
    if uploads:
        outcomes = ", ".join(NetworkLog.outcome(entry) for entry in uploads)
        log(f"INFO [{run.label}] analytics: {len(uploads)} POST(s) to /mfp/api/loguploader observed ({outcomes})")
    else:
        log(f"INFO [{run.label}] analytics: no /mfp/api/loguploader posts observed")

    # Origin B (not allowed): its registration must fail and it must get no token.
    registered_before = gatehouse.registrations()
    network_mark = len(browser.network.entries)
    page_steps = {}
    done, fatal = browser.run_page(f"{origins['B']}/app/index.html?server={server}&mode=forbidden",
                                   FORBIDDEN_PAGE_TIMEOUT, run.label, page_steps, held={FORBIDDEN_STEP})
    new_registrations = gatehouse.registrations()[len(registered_before):]
    attempts = [entry for entry in browser.network.since(network_mark)
                if "/registration/v1/self" in entry["url"] and entry["method"] in ("POST", "PUT")]
    preflights = [entry for entry in browser.network.since(network_mark)
                  if "/registration/v1/self" in entry["url"] and entry["method"] == "OPTIONS"]

    result, _, detail = page_steps.get(FORBIDDEN_STEP, (None, True, ""))
    reasons = []
    if fatal:
        reasons.append(f"the page failed: {fatal}")
    elif not done:
        reasons.append(f"the page did not finish within {FORBIDDEN_PAGE_TIMEOUT} s")
    if result is None:
        reasons.append("the page never reported the step")
    elif result != "pass":
        reasons.append(f"the page says: {detail}")
    if new_registrations:
        reasons.append(f"gatehouse registered client(s) {', '.join(new_registrations)} meanwhile")
    if not registered_before:
        reasons.append("gatehouse logged no 'Registered client' line for origin A either, so its log cannot show "
                       "whether origin B registered (did the log format change?)")
    if not attempts:
        reasons.append("the browser's network log shows no registration request from origin B")
    refused = [entry for entry in attempts if entry["error"] or entry["status"] == 403]
    if len(refused) != len(attempts):
        reasons.append("registration not refused: " + "; ".join(
            f"{entry['method']} {entry['url']} -> {NetworkLog.outcome(entry)}" for entry in attempts))
    evidence = [f"{entry['method']} registration -> {NetworkLog.outcome(entry)}" for entry in attempts]
    evidence += [f"preflight -> {NetworkLog.outcome(entry)}"
                 + (f" without Access-Control-Allow-Origin" if entry["status"] and
                    "access-control-allow-origin" not in entry["response_headers"] else "")
                 for entry in preflights]
    summary = (detail + "; " if detail and result == "pass" else "") + "; ".join(evidence)
    summary += f"; gatehouse registered {len(new_registrations)} client(s) meanwhile"
    run.required.append(FORBIDDEN_STEP)
    if reasons:
        run.steps[FORBIDDEN_STEP] = ("fail", True, "; ".join(reasons))
        run.fail(f"failed step {FORBIDDEN_STEP}", f"{FORBIDDEN_STEP}: {'; '.join(reasons)} [{summary}]")
    else:
        run.steps[FORBIDDEN_STEP] = ("pass", True, summary)
        log(f"PASS [{run.label}] {FORBIDDEN_STEP}: {summary}")


# ------------------------------------------------------------------------------------------------ tests of their own

# The tests with a main of their own and steps of their own (console.py, openid.py, Tests/OpenID/client_library.py):
# their arguments and settings, work folder, steps, and the report of their outcome.

def standalone_settings(description, keep_help, verbose_help="print the logs even when everything passes",
                        browser=True):
    """Parses the arguments every such test takes (--gatehouse, --start-timeout, --keep, --verbose; with `browser`,
    --screenshots, --chromium and --chromedriver too), makes SIGTERM and SIGHUP run the cleanups, and returns the
    Settings (with `logs`: the (title, text function) pairs shown on failure); None, after a `FAIL setup` line, when
    the gatehouse binary, or for a browser test Chromium or chromedriver, is missing."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=str(REPO / ".build/debug/gatehouse"), help="the gatehouse binary")
    if browser:
        parser.add_argument("--screenshots", default=str(HERE / "screenshots"), help="where the screenshots go")
        parser.add_argument("--chromium", default=None)
        parser.add_argument("--chromedriver", default=None)
    parser.add_argument("--start-timeout", type=float, default=30)
    parser.add_argument("--keep", action="store_true", help=keep_help)
    parser.add_argument("--verbose", "-v", action="store_true", help=verbose_help)
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)

    settings = Settings()
    settings.gatehouse = Path(args.gatehouse).absolute()
    settings.start_timeout = args.start_timeout
    settings.keep = args.keep
    settings.verbose = args.verbose
    if browser:
        settings.screenshots = Path(args.screenshots).resolve()
        settings.screenshots.mkdir(parents=True, exist_ok=True)
    settings.logs = []
    if not os.access(settings.gatehouse, os.X_OK):
        log(f"FAIL setup: no gatehouse binary at {settings.gatehouse} (build it with `swift build`)")
        return None
    if browser:
        settings.chromium = find_executable(args.chromium, ["chromium", "chromium-browser", "google-chrome"])
        settings.chromedriver = find_executable(args.chromedriver, ["chromedriver"])
        if not settings.chromium or not settings.chromedriver:
            log("FAIL setup: chromium or chromedriver not found (apt-get install chromium chromium-driver)")
            return None
    return settings


def work_folder(prefix, keep):
    """A new temporary folder named `prefix`…, removed when the cleanups run unless `keep` (then its path is
    printed)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    if keep:
        log(f"work folder: {work}")
    else:
        on_cleanup(lambda: shutil.rmtree(work, ignore_errors=True))
    return work


def step_runner(results, prefix="", where=None, tracebacks=False):
    """The `step(name, function)` of a test's steps: runs `function`, records ("pass", its detail) or ("fail", the
    error) as `results[name]` and prints PASS or FAIL with `prefix` before the name, after a failure `where()` (e.g.
    the page's URL) and, with `tracebacks`, the traceback; a failed step does not stop the others."""
    def step(name, function):
        started = time.monotonic()
        try:
            detail = function()
            results[name] = ("pass", detail)
            log(f"PASS {prefix}{name}: {detail} ({time.monotonic() - started:.1f} s)")
        except Exception as error:  # noqa: BLE001 - a failed step is reported, the others still run
            results[name] = ("fail", f"{type(error).__name__}: {error}")
            log(f"FAIL {prefix}{name}: {type(error).__name__}: {error}{where() if where else ''}")
            if tracebacks:
                log(traceback.format_exc())
    return step


def run_standalone(run_steps, settings, *, folder, heading, title, label, prefix="", steps=None, log_tail=None,
                   note="", counts=False):
    """Runs `run_steps(settings, results, work)` in a new work folder (prefix `folder`) under the heading `heading`
    and reports it: a failed set-up as `FAIL <prefix>setup`; on failure (or with --verbose) settings.logs under
    `[label]` headings (the last `log_tail` characters of each); then `<title> passed` or `FAILED` with the count of
    the `steps` that passed (None: the names run_steps returns), `note` after a pass, and with `counts` a line
    `N passed, M failed`. Returns the exit status: 0 if every step passed, else 1."""
    work = work_folder(folder, settings.keep)
    log(f"\n---------------- {heading} ----------------")
    started = time.monotonic()
    results = {}
    names = list(steps or [])
    try:
        returned = run_steps(settings, results, work)
        if steps is None:
            names = list(returned)
    except Exception as error:  # noqa: BLE001 - the set-up failed: reported, logs dumped
        log(f"FAIL {prefix}setup: {type(error).__name__}: {error}")
        results.setdefault("setup", ("fail", str(error)))
    failed = [name for name in names if results.get(name, ("fail",))[0] != "pass"] + \
             (["setup"] if "setup" in results else [])
    if failed or settings.verbose:
        dump_logs(label, settings.logs, log_tail)
    elapsed = time.monotonic() - started
    passed = len([name for name in names if results.get(name, ("fail",))[0] == "pass"])
    if failed or not names:
        log(f"\n{title} FAILED: {passed}/{len(names)} steps ({', '.join(failed)}); {elapsed:.1f} s")
        if counts:
            log(f"{passed} passed, {len(failed)} failed")
        return 1
    log(f"\n{title} passed: {passed}/{len(names)} steps; {elapsed:.1f} s{note}")
    if counts:
        log(f"{passed} passed, 0 failed")
    return 0


# ------------------------------------------------------------------------------------------------ main

class Settings:
    pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=str(REPO / ".build/debug/gatehouse"), help="the gatehouse binary")
    parser.add_argument("--sdk", default=None,
                        help="the ibm-mfp-web-sdk folder (served unmodified under /sdk/; default: ../shared/clients/, "
                             "else the pinned download, see fixtures.py)")
    parser.add_argument("--mode", choices=MODES + ("both", "all"), default="all",
                        help="which mode(s) to run (default: all three, same-origin first; both: same- and cross-origin)")
    parser.add_argument("--chromium", default=None, help="the Chromium binary (default: chromium on PATH)")
    parser.add_argument("--chromedriver", default=None, help="chromedriver (default: chromedriver on PATH)")
    parser.add_argument("--page-timeout", type=float, default=120, help="seconds for each run of the six steps")
    parser.add_argument("--start-timeout", type=float, default=30, help="seconds for gatehouse to listen")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, data, profiles, policy)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the logs even when everything passes")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    atexit.register(run_cleanups)

    settings = Settings()
    settings.verbose = args.verbose
    settings.page_timeout = args.page_timeout
    settings.start_timeout = args.start_timeout
    settings.gatehouse = Path(args.gatehouse)
    if not settings.gatehouse.is_absolute():
        settings.gatehouse = Path.cwd() / settings.gatehouse
    if args.sdk is None:
        try:
            args.sdk = str(fixtures.client("ibm-mfp-web-sdk"))
        except fixtures.FixtureError as error:
            log(f"FAIL setup: {error}")
            return 2
    settings.sdk = Path(args.sdk).resolve()
    for required in (settings.sdk / "ibmmfpf.js", settings.sdk / "lib/analytics/ibmmfpfanalytics.js"):
        if not required.is_file():
            log(f"FAIL setup: the web SDK is missing: {required}")
            return 2
    if not os.access(settings.gatehouse, os.X_OK):
        log(f"FAIL setup: no gatehouse binary at {settings.gatehouse} (build it with `swift build`)")
        return 2
    settings.chromium = find_executable(args.chromium, ["chromium", "chromium-browser", "google-chrome"])
    settings.chromedriver = find_executable(args.chromedriver, ["chromedriver"])
    if not settings.chromium or not settings.chromedriver:
        log(f"FAIL setup: chromium ({settings.chromium}) or chromedriver ({settings.chromedriver}) not found "
            "(apt-get install chromium chromium-driver)")
        return 2

    settings.work = work_folder("gatehouse-browser-", args.keep)

    started = time.monotonic()
    modes = {"same-origin": same_origin_mode, "cross-origin": cross_origin_mode, "nginx": nginx_mode,
             "app-management": lambda *arguments: app_management.mode(sys.modules[__name__], *arguments),
             "second-factors": lambda *arguments: second_factors.mode(sys.modules[__name__], *arguments)}
    required = {"app-management": app_management.STEPS, "second-factors": second_factors.STEPS}
    selected = MODES if args.mode == "all" else MODES[:2] if args.mode == "both" else (args.mode,)
    runs = [run_mode(modes[label], settings, label, required.get(label, REQUIRED_STEPS)) for label in selected]

    elapsed = time.monotonic() - started
    counts = ", ".join(f"{run.summary()} ({run.elapsed:.1f} s)" for run in runs)
    failed = [run for run in runs if run.problems]
    if failed:
        details = "; ".join(f"[{run.label}] {', '.join(run.problems)}" for run in failed)
        log(f"\nbrowser test FAILED: {counts}; {elapsed:.1f} s in all ({details})")
        return 1
    log(f"\nbrowser test passed: {counts}; {elapsed:.1f} s in all")
    return 0


def run_main(main_function):
    """Runs a browser test's `main` and exits with its status, every cleanup run whatever happens."""
    status = 1
    try:
        status = main_function()
    finally:
        run_cleanups()
    sys.exit(status)


if __name__ == "__main__":
    run_main(main)
