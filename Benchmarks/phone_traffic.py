#!/usr/bin/env python3
"""What a phone's traffic costs `gatehouse serve` (issue 39): apps that each open a new connection (TCP, or TLS 1.3
with an ECDSA P-256 certificate), run one complete MobileFirst flow on it (register, challenge, answer, authorization
code, token: five requests) and go away, arriving at a fixed rate well under saturation — against the same flows over
connections kept alive, in the same run (the baseline). The server's CPU comes from its own counters
(/proc/<pid>/stat), never from the load generator; latencies are the apps' (p50/p99 of a whole flow).

Then the cost of a request on a new connection (`GET /health`, one request a connection, at a fixed rate) for
`gatehouse serve` and for Debian's nginx answering the same on the same machine: CPU µs per request and the ratio.

    Benchmarks/phone_traffic.py --gatehouse .build-release/release/gatehouse [--flows 300] [--rate 40] [--tls]
                                [--requests 2000] [--request-rate 400] [--no-nginx] [--compare=ARGS]

scripts/bench-phone builds the release binary and runs this. Every loop is bounded in count and time; everything
listens on loopback ports the kernel chose.
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# The FlowBenchmark's policy (Benchmarks/BenchmarkSupport/FlowClient.swift): one PIN check, no registration throttle.
# Plus, for the OpenID Connect code flow (issue 58): UserLogin with a user whose bcrypt cost is 4 (the flow's own cost, not
# bcrypt's, is measured; cost 10 adds about 50 ms of CPU a sign-in) and a confidential relying party.
POLICY = """registrationThrottle: { perAddress: 0 }
securityChecks:
  PinCodeAttempts:
    class: PinCodeAttempts
    properties: { pinCode: "1234", maxAttempts: 3, successStateExpirationSec: 3600 }
  UserLogin:
    class: UserLogin
    properties: { maxAttempts: 3, successStateExpirationSec: 3600 }
applications:
  - id: com.bench.app
    platform: ios
    scopeElementMapping: { accessRestricted: PinCodeAttempts }
openIDClients:
  - id: bench-rp
    secretHash: "$2b$04$cVF60iQ6vK9WE5LymdZzuuJfMhNAQw6YLJoJcwAZu1NCY5F/www1K"
    redirectURIs: ["http://127.0.0.1:9/cb"]
    allowedScope: "openid profile email"
    scopeElementMapping: { openid: UserLogin }
users:
  - { username: john, displayName: John Doe, passwordHash: "$2b$04$sgAASYgFb4AZKl/vIQClWesqgsJQy2KQVrogNNikfxIwtWl2QMXHa" }
"""
RP_AUTHORIZATION = "Basic " + base64.b64encode(b"bench-rp:rp-secret-0123456789").decode()
RP_REDIRECT = "http://127.0.0.1:9/cb"
REDIRECT = "https://mfpredirecturi"
TICKS = os.sysconf("SC_CLK_TCK")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cpu_seconds(pids):
    """User + system CPU of the processes (and their exited children), from the kernel's counters."""
    total = 0.0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        total += sum(int(fields[index]) for index in (11, 12, 13, 14)) / TICKS
    return total


class App:
    """One simulated app: an RSA key (shared by a few apps: key generation is the client's cost, not the server's)."""

    def __init__(self, key, number):
        self.key = key
        self.device = f"phone-{number}"
        numbers = key.public_key().public_numbers()
        to_bytes = lambda value: value.to_bytes((value.bit_length() + 7) // 8, "big")  # noqa: E731
        self.public = {"kty": "RSA", "n": b64url(to_bytes(numbers.n)), "e": b64url(to_bytes(numbers.e))}

    def sign(self, payload, kid=None):
        jwk = dict(self.public, kid=kid) if kid else self.public
        header = b64url(json.dumps({"alg": "RS256", "jwk": jwk}, separators=(",", ":")).encode())
        body = b64url(json.dumps(payload, separators=(",", ":")).encode())
        signature = self.key.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return header, body, b64url(signature)

    def flow(self, connection):
        """The five requests of a complete flow on `connection`; raises on any unexpected answer."""
        def call(method, path, body=None, headers=None):
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            return response.status, response.getheader("Location"), data

        data = {"device": {"id": self.device, "hardware": "phone", "platform": "ios 18"},
                "application": {"id": "com.bench.app", "clientPlatform": "ios", "version": "1.0"},
                "attributes": {"sdk_protocol_version": 1}}
        header, payload, signature = self.sign(data)
        json_headers = {"Content-Type": "application/json"}
        status, location, _ = call("POST", "/mfp/api/registration/v1/self", json.dumps(
            {"signedRegistrationData": {"header": header, "payload": payload, "signature": signature}}), json_headers)
        assert status == 201 and location, f"register answered {status}"
        client_id = location.rstrip("/").split("/")[-1]
        status, _, _ = call("POST", "/mfp/api/preauth/v1/preauthorize",
                            json.dumps({"client_id": client_id, "scope": "accessRestricted"}), json_headers)
        assert status == 401, f"preauthorize answered {status}"
        status, _, _ = call("POST", "/mfp/api/preauth/v1/preauthorize", json.dumps(
            {"client_id": client_id, "scope": "accessRestricted", "challengeResponse": {"PinCodeAttempts": {"pin": "1234"}}}), json_headers)
        assert status == 200, f"answer answered {status}"
        query = urllib.parse.urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
                                        "scope": "accessRestricted"})
        status, location, _ = call("GET", "/mfp/api/az/v1/authorization?" + query)
        assert status == 302 and location, f"authorization answered {status}"
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["code"][0]
        now = int(time.time() * 1000)
        assertion = ".".join(self.sign({"iss": "com.bench.app$ios", "sub": client_id, "aud": "az/v1/token", "iat": now,
                                        "exp": now + 60000, "jti": code}, kid=client_id))
        form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "client_id": client_id,
                                       "redirect_uri": REDIRECT, "client_assertion": assertion,
                                       "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"})
        status, _, _ = call("POST", "/mfp/api/az/v1/token", form, {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, f"token answered {status}"


class Browser:
    """One browser signing a user in to a web app through the hosted page (OpenID Connect code flow): the authorization
    request (the page, a new session cookie), the page script's first round, the password, then the app's code exchange
    (client_secret_basic; id_token RS256). Four requests; a new browser session each flow."""

    def __init__(self, number):
        self.number = number

    def flow(self, connection):
        def call(method, path, body=None, headers=None):
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.getheader("Location"), response.getheader("Set-Cookie"), response.read()

        query = urllib.parse.urlencode({"response_type": "code", "client_id": "bench-rp", "redirect_uri": RP_REDIRECT,
                                        "scope": "openid profile", "state": f"s{self.number}", "nonce": f"n{self.number}"})
        status, _, cookie, page = call("GET", "/oidc/authorize?" + query)
        assert status == 200 and cookie, f"authorize answered {status}"
        html = page.decode()
        request = re.search(r'data-request="([^"]+)"', html).group(1)
        csrf = re.search(r'data-csrf="([^"]+)"', html).group(1)
        headers = {"Content-Type": "application/json", "Cookie": cookie.split(";")[0]}
        status, _, _, _ = call("POST", "/oidc/sign-in", json.dumps({"request": request, "csrf": csrf, "answers": {}}), headers)
        assert status == 200, f"first round answered {status}"
        status, _, _, body = call("POST", "/oidc/sign-in", json.dumps(
            {"request": request, "csrf": csrf, "answers": {"UserLogin": {"username": "john", "password": "demo"}}}), headers)
        redirect = json.loads(body).get("redirect") if status == 200 else None
        assert redirect, f"sign-in answered {status} {body[:120]!r}"
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect).query)["code"][0]
        form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": RP_REDIRECT})
        status, _, _, body = call("POST", "/oidc/token", form, {"Content-Type": "application/x-www-form-urlencoded",
                                                                 "Authorization": RP_AUTHORIZATION})
        assert status == 200 and b"id_token" in body, f"token answered {status}"


class Target:
    """Where the load goes: a host and port, plain or TLS (the certificate trusted by the generator)."""

    def __init__(self, port, tls_context=None):
        self.port = port
        self.tls = tls_context

    def connect(self):
        if self.tls:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=20, context=self.tls)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)


def paced(count, rate, seconds, work, concurrency):
    """Runs `work(index)` `count` times, started at `rate` per second (at most `concurrency` at once, at most
    `seconds` in all); the durations of the completed ones and how many failed."""
    durations, failures = [], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    start = time.monotonic()

    def run(index):
        if time.monotonic() > deadline:
            return
        began = time.monotonic()
        try:
            work(index)
            with lock:
                durations.append(time.monotonic() - began)
        except Exception as error:  # noqa: BLE001 - counted and reported
            with lock:
                failures.append(repr(error))

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for index in range(count):
            delay = start + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if time.monotonic() > deadline:
                break
            pool.submit(run, index)
    return durations, failures


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


# CPU seconds per second each server spends with no load at all (timers, pollers, writers), measured in the run.
IDLE = {}


def measured(pids, load):
    """Runs `load` (paced work: its durations and failures); with the CPU seconds `pids` spent per completed unit, in
    all and less their idle CPU over the same time (``IDLE``, when measured)."""
    before, started = cpu_seconds(pids), time.monotonic()
    durations, failures = load()
    cpu, elapsed = cpu_seconds(pids) - before, time.monotonic() - started
    done = max(1, len(durations))
    measured.elapsed = elapsed
    return durations, failures, cpu / done, (cpu - IDLE.get(tuple(pids), 0) * elapsed) / done


def measure_flows(label, target, apps, count, rate, keep_alive, concurrency, pids, seconds):
    """Flows at `rate`: on a new connection each (a phone), or over kept-alive connections (one per worker)."""
    local = threading.local()

    def work(index):
        app = apps[index % len(apps)]
        if keep_alive:
            if getattr(local, "connection", None) is None:
                local.connection = target.connect()
            try:
                app.flow(local.connection)
            except Exception:
                local.connection.close()
                local.connection = None
                raise
        else:
            connection = target.connect()
            try:
                app.flow(connection)
            finally:
                connection.close()

    durations, failures, cpu, busy = measured(pids, lambda: paced(count, rate, seconds, work, concurrency))
    return {"label": label, "flows": len(durations), "failures": failures, "cpu_ms": cpu * 1000, "busy_ms": busy * 1000,
            "per_second": len(durations) / max(measured.elapsed, 1e-9),
            "p50_ms": percentile(durations, 0.5) * 1000, "p99_ms": percentile(durations, 0.99) * 1000}


def measure_new_connection_requests(label, port, path, count, rate, pids, seconds, concurrency=8, tls_context=None):
    """`GET path`, one request on each new connection (a full TLS handshake each with `tls_context`), at `rate`: CPU µs
    per request of `pids`."""
    target = Target(port, tls_context)

    def work(_):
        connection = target.connect()
        try:
            connection.request("GET", path, headers={"Connection": "close"})
            response = connection.getresponse()
            response.read()
            assert response.status == 200, f"{path} answered {response.status}"
        finally:
            connection.close()

    durations, failures, cpu, busy = measured(pids, lambda: paced(count, rate, seconds, work, concurrency))
    return {"label": label, "requests": len(durations), "failures": failures, "cpu_us": cpu * 1e6, "busy_us": busy * 1e6,
            "p50_ms": percentile(durations, 0.5) * 1000}


def measure_idle(label, pids, seconds=8):
    """The server's CPU per second while nothing is asked of it; later figures are given with and without it."""
    before, started = cpu_seconds(pids), time.monotonic()
    time.sleep(seconds)
    IDLE[tuple(pids)] = (cpu_seconds(pids) - before) / (time.monotonic() - started)
    print(f"{label} idle: {IDLE[tuple(pids)] * 1000:.1f} ms of CPU per second")


def start_listening(command, log_path, pattern, name):
    """Starts `command` (its output to `log_path`) and waits, 60 s at most, for `pattern` to show its port in the output."""
    log = open(log_path, "w+")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        log.flush()
        match = re.search(pattern, Path(log.name).read_text())
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{name} did not start: {Path(log.name).read_text()[-2000:]}")


def start_gatehouse(binary, folder, tls, extra=(), name="gatehouse"):
    command = [binary, "serve", "--port", "0", "--data", str(folder / f"{name}-data"), "--policy", str(folder / "policy.yaml"),
               "--log-level", "warning", *extra]
    if tls:
        command += ["--tls-certificate", str(folder / "cert.pem"), "--tls-key", str(folder / "key.pem")]
    return start_listening(command, folder / (f"{name}-tls.log" if tls else f"{name}.log"), r"https?://127\.0\.0\.1:(\d+)", name)


def make_certificate(folder):
    """A self-signed ECDSA P-256 certificate for 127.0.0.1: folder/cert.pem and folder/key.pem."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")], check=True, capture_output=True, timeout=60)


def cleaner(processes, folder):
    """A function that stops `processes` (their process groups) and deletes `folder`; also run on SIGTERM."""
    def stop_all(*_):
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except Exception:  # noqa: BLE001 - already gone
                pass
        shutil.rmtree(folder, ignore_errors=True)

    signal.signal(signal.SIGTERM, lambda *_: (stop_all(), sys.exit(1)))
    return stop_all


def start_nginx(folder, tls=False, workers=1):
    """nginx answering `GET /health` (`workers` worker processes, one by default), plain or over TLS 1.3 with the run's
    certificate (cert.pem/key.pem), session tickets on (nginx's default)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        return None, None, None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = folder / "nginx"
    (root / "logs").mkdir(parents=True, exist_ok=True)
    tls_lines = (f"ssl_certificate {folder / 'cert.pem'}; ssl_certificate_key {folder / 'key.pem'}; ssl_protocols TLSv1.3; "
                 "ssl_session_tickets on;") if tls else ""
    (root / "nginx.conf").write_text(f"""worker_processes {workers};
pid {root}/nginx.pid;
error_log {root}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {root}/body; proxy_temp_path {root}/proxy; fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi; scgi_temp_path {root}/scgi;
    server {{ listen 127.0.0.1:{port}{" ssl" if tls else ""}; {tls_lines} location = /health {{ return 200 "ok\\n"; }} }}
}}
""")
    process = subprocess.Popen([nginx, "-p", str(root), "-c", str(root / "nginx.conf"), "-g", "daemon off;"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
    return process, port, [process.pid] + [int(pid) for pid in children]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=".build-release/release/gatehouse")
    parser.add_argument("--flows", type=int, default=300, help="flows per mode (default 300)")
    parser.add_argument("--rate", type=float, default=40, help="flows started per second (default 40)")
    parser.add_argument("--concurrency", type=int, default=16, help="flows in flight at most (default 16)")
    parser.add_argument("--tls", action="store_true", help="also over TLS 1.3 (ECDSA P-256 certificate)")
    parser.add_argument("--requests", type=int, default=2000, help="new-connection /health requests per server")
    parser.add_argument("--request-rate", type=float, default=400, help="their rate per second (default 400)")
    parser.add_argument("--no-nginx", action="store_true", help="skip nginx's /health baseline")
    parser.add_argument("--seconds", type=float, default=120, help="the most any one measurement may take")
    parser.add_argument("--compare", metavar="ARGS", help="also run a second plain `gatehouse serve` with these extra "
                        "arguments (e.g. --compare='--connections-on-event-loop false'), measured the same way in the same run")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="gatehouse-phone-"))
    processes = []
    stop_all = cleaner(processes, folder)
    try:
        (folder / "policy.yaml").write_text(POLICY)
        keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(8)]
        apps = [App(keys[index % len(keys)], index) for index in range(64)]
        rows = []
        gatehouse, port = start_gatehouse(args.gatehouse, folder, tls=False)
        processes.append(gatehouse)
        plain = Target(port)
        print(f"gatehouse serve (pid {gatehouse.pid}) on 127.0.0.1:{port}; {args.flows} flows per mode at {args.rate}/s, "
              f"at most {args.concurrency} in flight; CPU from /proc/<pid>/stat")
        measure_flows("warm-up", plain, apps, min(100, args.flows), args.rate * 2, True, args.concurrency, [gatehouse.pid], args.seconds)
        measure_idle("gatehouse serve", [gatehouse.pid])
        rows.append(measure_flows("plain, kept-alive connections", plain, apps, args.flows, args.rate, True, args.concurrency, [gatehouse.pid], args.seconds))
        rows.append(measure_flows("plain, a new connection per app", plain, apps, args.flows, args.rate, False, args.concurrency, [gatehouse.pid], args.seconds))
        browsers = [Browser(index) for index in range(64)]
        measure_flows("warm-up", plain, browsers, min(50, args.flows), args.rate, True, args.concurrency, [gatehouse.pid], args.seconds)
        rows.append(measure_flows("OpenID code flow, kept-alive connections", plain, browsers, args.flows, args.rate, True, args.concurrency,
                                  [gatehouse.pid], args.seconds))
        rows.append(measure_flows("OpenID code flow, a new connection per browser", plain, browsers, args.flows, args.rate, False,
                                  args.concurrency, [gatehouse.pid], args.seconds))
        # Saturated: as many flows as 16 at a time get through, each on a new connection (flows per second).
        rows.append(measure_flows("MobileFirst flow, saturated, new connections", plain, apps, args.flows * 2, 10_000, False,
                                  args.concurrency, [gatehouse.pid], args.seconds))
        rows.append(measure_flows("OpenID code flow, saturated, new connections", plain, browsers, args.flows * 2, 10_000, False,
                                  args.concurrency, [gatehouse.pid], args.seconds))
        compared = None
        if args.compare:
            compared, compared_port = start_gatehouse(args.gatehouse, folder, tls=False, extra=args.compare.split(), name="compared")
            processes.append(compared)
            other = Target(compared_port)
            print(f"compared: gatehouse serve {args.compare} (pid {compared.pid})")
            measure_flows("warm-up", other, apps, min(100, args.flows), args.rate * 2, True, args.concurrency, [compared.pid], args.seconds)
            measure_idle(f"gatehouse serve {args.compare}", [compared.pid])
            rows.append(measure_flows(f"{args.compare}: plain, kept-alive", other, apps, args.flows, args.rate, True, args.concurrency,
                                      [compared.pid], args.seconds))
            rows.append(measure_flows(f"{args.compare}: plain, new connection", other, apps, args.flows, args.rate, False, args.concurrency,
                                      [compared.pid], args.seconds))
        if args.tls:
            make_certificate(folder)
            secure, tls_port = start_gatehouse(args.gatehouse, folder, tls=True)
            processes.append(secure)
            context = ssl.create_default_context(cafile=str(folder / "cert.pem"))
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            target = Target(tls_port, context)
            measure_flows("warm-up", target, apps, min(100, args.flows), args.rate * 2, True, args.concurrency, [secure.pid], args.seconds)
            measure_idle("gatehouse serve (TLS)", [secure.pid])
            rows.append(measure_flows("TLS 1.3, kept-alive connections", target, apps, args.flows, args.rate, True, args.concurrency, [secure.pid], args.seconds))
            rows.append(measure_flows("TLS 1.3, a new connection (full handshake) per app", target, apps, args.flows, args.rate, False,
                                      args.concurrency, [secure.pid], args.seconds))
        baseline = rows[0]
        print(f"\n{'flows':54}{'done':>6}{'failed':>7}{'flows/s':>8}{'CPU ms/flow':>12}{'less idle':>10}{'÷ base':>8}{'p50 ms':>8}{'p99 ms':>8}")
        for row in rows:
            print(f"{row['label']:54}{row['flows']:>6}{len(row['failures']):>7}{row['per_second']:>8.1f}{row['cpu_ms']:>12.3f}{row['busy_ms']:>10.3f}"
                  f"{row['busy_ms'] / baseline['busy_ms']:>8.2f}{row['p50_ms']:>8.2f}{row['p99_ms']:>8.2f}")
        failures = [failure for row in rows for failure in row["failures"]]

        requests = [measure_new_connection_requests("gatehouse serve", port, "/health", args.requests, args.request_rate,
                                                    [gatehouse.pid], args.seconds)]
        if compared is not None:
            requests.append(measure_new_connection_requests(f"gatehouse serve {args.compare}", compared_port, "/health", args.requests,
                                                            args.request_rate, [compared.pid], args.seconds))
        if not args.no_nginx:
            nginx, nginx_port, nginx_pids = start_nginx(folder)
            if nginx is None:
                print("nginx is not installed (apt-get install nginx-light): its baseline is skipped")
            else:
                processes.append(nginx)
                measure_idle("nginx", nginx_pids, seconds=3)
                requests.append(measure_new_connection_requests("nginx", nginx_port, "/health", args.requests, args.request_rate,
                                                                nginx_pids, args.seconds))
        print(f"\n{'GET /health, one request per new connection':54}{'done':>6}{'failed':>7}{'CPU µs/req':>12}{'less idle':>10}{'÷ nginx':>8}{'p50 ms':>8}")
        reference = requests[-1]["busy_us"] if len(requests) > 1 else float("nan")
        for row in requests:
            print(f"{row['label']:54}{row['requests']:>6}{len(row['failures']):>7}{row['cpu_us']:>12.1f}{row['busy_us']:>10.1f}"
                  f"{row['busy_us'] / reference:>8.2f}{row['p50_ms']:>8.2f}")
        failures += [failure for row in requests for failure in row["failures"]]
        if failures:
            print(f"\n{len(failures)} failed, e.g. {failures[0]}")
            return 1
        return 0
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
