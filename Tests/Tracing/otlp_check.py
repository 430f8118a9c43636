#!/usr/bin/env python3
"""Gatehouse's traces, read by what OpenTelemetry itself publishes: the real `gatehouse serve` and `gatehouse gateway`
export to a collector here, whose every body is parsed strictly (unknown fields refused) by opentelemetry-proto's
`ExportTraceServiceRequest` with protobuf's JSON parser, ids decoded as OTLP/JSON says (hexadecimal). Then the span
trees of a UserLogin flow (the Swift SDK's `gatehouse login`) and of a relayed gateway request (`curl`) are checked.

    python3 Tests/Tracing/otlp_check.py [--gatehouse .build/debug/gatehouse]

Exit 0 when every export parsed and both trees are whole; 1 otherwise. Every wait is bounded.
"""
import argparse, base64, json, os, re, subprocess, sys, tempfile, threading, time, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

received = []      # (service name, Span)
keys = []          # the x-collector-key field of each export, per service
problems = []
lock = threading.Lock()


def hex_ids_to_base64(value):
    """OTLP/JSON writes trace and span ids in hexadecimal; protobuf's JSON mapping reads bytes as base64."""
    if isinstance(value, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    else hex_ids_to_base64(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [hex_ids_to_base64(v) for v in value]
    return value


class Collector(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"posted to {self.path}")
            if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                raise ValueError(f"Content-Type {self.headers.get('Content-Type')}")
            raw = json.loads(body)
            for resource in raw["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        if not (re.fullmatch(r"[0-9a-f]{32}", span["traceId"]) and re.fullmatch(r"[0-9a-f]{16}", span["spanId"])):
                            raise ValueError(f"ids not lower-case hexadecimal: {span['traceId']} {span['spanId']}")
            request = ExportTraceServiceRequest()
            json_format.Parse(json.dumps(hex_ids_to_base64(raw)), request, ignore_unknown_fields=False)
            with lock:
                for resource in request.resource_spans:
                    name = next((a.value.string_value for a in resource.resource.attributes if a.key == "service.name"), "?")
                    keys.append((name, self.headers.get("x-collector-key")))
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            if len(span.trace_id) != 16 or len(span.span_id) != 8 or span.parent_span_id not in (b"",) and len(span.parent_span_id) != 8:
                                raise ValueError(f"id lengths of {span.name}")
                            if span.end_time_unix_nano < span.start_time_unix_nano or span.start_time_unix_nano < 1_600_000_000 * 10**9:
                                raise ValueError(f"times of {span.name}")
                            received.append((name, span))
            self.send_response(200)
            answer = b"{}"
        except Exception as error:  # noqa: BLE001 — every failure is a finding
            with lock:
                problems.append(f"export refused: {error!r}")
            self.send_response(400)
            answer = json.dumps({"error": str(error)}).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def start(command, banner, env=None):
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = re.search(banner, line)
        if match:
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, int(match.group(1))
    process.kill()
    sys.exit(f"{command[1]} did not start")


def wait_for(predicate, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with lock:
            if predicate():
                return True
        time.sleep(0.1)
    return False


def tree(rootName, service, expected):
    """The trace of the first `rootName` span of `service`; checks `expected` (child name -> its parent's name)."""
    with lock:
        spans = [s for n, s in received if n == service]
    roots = [s for s in spans if s.name == rootName and not s.parent_span_id]
    if not roots:
        return [f"{service}: no root span {rootName!r} (have {sorted({s.name for s in spans})})"]
    root = roots[0]
    trace = [s for s in spans if s.trace_id == root.trace_id]
    byID = {s.span_id: s for s in trace}
    found = []
    if root.kind != Span.SPAN_KIND_SERVER:
        found.append(f"{rootName}: kind {root.kind}, not SERVER")
    for span in trace:
        if span is not root and span.parent_span_id not in byID:
            found.append(f"{service}: {span.name} has a parent outside its trace")
    for child, parent in expected.items():
        if not any(s.name == child and byID.get(s.parent_span_id) is not None and byID[s.parent_span_id].name == parent for s in trace):
            found.append(f"{service}: no {child!r} below {parent!r} (trace: {[(s.name, byID.get(s.parent_span_id).name if s.parent_span_id in byID else None) for s in trace]})")
    print(f"  {service}: {rootName} — {len(trace)} spans: " + ", ".join(sorted({s.name for s in trace if s is not root})))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gatehouse", default=".build/debug/gatehouse")
    gatehouse = parser.parse_args().gatehouse
    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{collector.server_address[1]}"
    work = tempfile.mkdtemp(prefix="gatehouse-otlp-")
    env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_HEADERS="x-collector-key=k%2C1")
    serve, port = start([gatehouse, "serve", "--port", "0", "--data", os.path.join(work, "server")],
                        r"listens on http://127\.0\.0\.1:(\d+)", env=env)
    gateway, gateway_port = start([gatehouse, "gateway", "--port", "0", "--otlp-endpoint", endpoint],
                                  r"gateway listens on http://127\.0\.0\.1:(\d+)")
    failures = []
    try:
        login = subprocess.run([gatehouse, "login", "--server", f"http://127.0.0.1:{port}", "--data", os.path.join(work, "client")],
                               input="john\ndemo\nn\n", capture_output=True, text=True, timeout=60)
        if login.returncode != 0:
            failures.append(f"gatehouse login failed: {login.stdout} {login.stderr}")
        relayed = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "10", "-u", "joe:welcome",
                                  f"http://127.0.0.1:{gateway_port}/echo/hello"], capture_output=True, text=True, timeout=30)
        if relayed.stdout != "200":
            failures.append(f"curl through the gateway answered {relayed.stdout}")
        wait_for(lambda: any(s.name == "check UserLogin" for _, s in received) and any(s.name == "GET upstream" for _, s in received))
        time.sleep(1.5)  # the rest of both batches
        failures += tree("POST /mfp/api/preauth/v1/preauthorize", "gatehouse",
                         {"check UserLogin": "POST /mfp/api/preauth/v1/preauthorize", "bcrypt verify": "check UserLogin",
                          "store storedClient": "POST /mfp/api/preauth/v1/preauthorize"})
        failures += tree("GET /echo", "gatehouse-gateway",
                         {"admission demo": "GET /echo", "bcrypt verify": "admission demo", "GET upstream": "GET /echo"})
    finally:
        for process in (serve, gateway):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        collector.shutdown()
    failures += problems
    # OTEL_EXPORTER_OTLP_HEADERS reached the collector (percent-decoded) from serve, and only from it.
    if not keys or any(key != ("k,1" if name == "gatehouse" else None) for name, key in keys):
        failures.append(f"collector keys per export: {sorted(set(keys))}")
    with lock:
        total = len(received)
    print(f"otlp-check: {total} spans received, parsed by opentelemetry-proto's ExportTraceServiceRequest")
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures or total == 0 else 0)


if __name__ == "__main__":
    main()
