#!/usr/bin/env python3
"""What a new connection costs the gateway (issues 37 and 39): `GET /health` (the gateway's own probe), one request on
each new connection at a fixed rate well under saturation, and the same over connections kept alive — for the gateway
built now, optionally for another gateway binary (`--before`, e.g. the last release build) and for Debian's nginx
answering the same, in alternating rounds of one run. The servers' CPU comes from their own counters (/proc/<pid>/stat),
less what each spends idle over the same time; the table gives CPU µs per request and the ratios.

    Benchmarks/gateway_connections.py [--gatehouse .build-release/release/gatehouse] [--before BINARY]
                                      [--requests 3000] [--rate 400] [--rounds 3] [--tls]

scripts/bench-gateway-connections builds the release binary and runs this. Every loop is bounded in count and time;
everything listens on loopback ports the kernel chose.
"""
import argparse
import ssl
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from phone_traffic import (Target, cleaner, make_certificate, measure_idle, measure_new_connection_requests,  # noqa: E402
                           measured, paced, start_listening, start_nginx)


def start_gateway(binary, folder, name, tls, extra=()):
    """The demo gateway (its echo service behind a realm; `/health` is the gateway's own) on a free port; over TLS 1.3
    with the run's ECDSA P-256 certificate when `tls`."""
    command = [binary, "gateway", "--port", "0", "--log-level", "warning", *extra]
    if tls:
        command += ["--tls-certificate", str(folder / "cert.pem"), "--tls-key", str(folder / "key.pem")]
    return start_listening(command, folder / f"{name}.log", r"gateway listens on https?://127\.0\.0\.1:(\d+)", name)


def measure_kept_alive(label, target, count, rate, pids, seconds, concurrency=8):
    """`GET /health` over `concurrency` connections kept alive, at `rate`: CPU µs per request."""
    local = threading.local()

    def work(_):
        if getattr(local, "connection", None) is None:
            local.connection = target.connect()
        try:
            local.connection.request("GET", "/health")
            response = local.connection.getresponse()
            response.read()
            assert response.status == 200, f"/health answered {response.status}"
        except Exception:
            local.connection.close()
            local.connection = None
            raise

    durations, failures, cpu, busy = measured(pids, lambda: paced(count, rate, seconds, work, concurrency))
    return {"label": label, "requests": len(durations), "failures": failures, "cpu_us": cpu * 1e6, "busy_us": busy * 1e6}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=".build-release/release/gatehouse")
    parser.add_argument("--before", help="another gatehouse binary, measured in the same rounds")
    parser.add_argument("--requests", type=int, default=3000, help="requests per measurement (default 3000)")
    parser.add_argument("--rate", type=float, default=400, help="requests per second (default 400)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tls", action="store_true", help="over TLS 1.3 (ECDSA P-256), nginx terminating it too")
    options = parser.parse_args()
    seconds = options.requests / options.rate * 3 + 30

    folder = Path(tempfile.mkdtemp(prefix="gateway-connections-"))
    processes = []
    stop_all = cleaner(processes, folder)
    try:
        context = None
        if options.tls:
            make_certificate(folder)
            context = ssl.create_default_context(cafile=str(folder / "cert.pem"))
            context.minimum_version = ssl.TLSVersion.TLSv1_3
        servers = []
        for name, binary in [("gateway", options.gatehouse)] + ([("before", options.before)] if options.before else []):
            process, port = start_gateway(binary, folder, name, options.tls)
            processes.append(process)
            servers.append((name, port, [process.pid]))
        nginx, nginx_port, nginx_pids = start_nginx(folder, tls=options.tls)
        if nginx:
            processes.append(nginx)
            servers.append(("nginx", nginx_port, nginx_pids))
        for name, _, pids in servers:
            measure_idle(name, pids)
        results = {name: {"new": [], "kept": []} for name, _, _ in servers}
        for round_index in range(options.rounds):
            order = servers if round_index % 2 == 0 else list(reversed(servers))
            for name, port, pids in order:
                target = Target(port, context)
                new = measure_new_connection_requests(name, port, "/health", options.requests, options.rate, pids, seconds,
                                                      tls_context=context)
                kept = measure_kept_alive(name, target, options.requests, options.rate, pids, seconds)
                for kind, result in (("new", new), ("kept", kept)):
                    if result["failures"]:
                        raise SystemExit(f"{name} ({kind}): {result['failures']} failures")
                    results[name][kind].append(result["busy_us"])
                print(f"round {round_index + 1} {name}: new connection {new['busy_us']:.0f} µs, kept alive {kept['busy_us']:.0f} µs "
                      f"of CPU per request")

        def median(name, kind):
            return statistics.median(results[name][kind])

        print(f"\nGET /health{' over TLS 1.3' if options.tls else ''} at {options.rate:.0f}/s, {options.requests} requests a measurement, {options.rounds} rounds "
              "(medians, CPU µs per request less idle):")
        print(f"{'server':<10} {'new connection':>15} {'kept alive':>11} {'new ÷ nginx':>12} {'kept ÷ nginx':>13}")
        for name, _, _ in servers:
            new, kept = median(name, "new"), median(name, "kept")
            ratios = ("", "")
            if "nginx" in results:
                ratios = tuple(f"{value / median('nginx', kind):.2f}" if median("nginx", kind) > 0 else "n/a"
                               for value, kind in ((new, "new"), (kept, "kept")))
            print(f"{name:<10} {new:>15.0f} {kept:>11.0f} {ratios[0]:>12} {ratios[1]:>13}")
        if options.before:
            print(f"\ngateway ÷ before: new connection {median('gateway', 'new') / median('before', 'new'):.2f}, "
                  f"kept alive {median('gateway', 'kept') / median('before', 'kept'):.2f}")
    finally:
        stop_all()


if __name__ == "__main__":
    main()
