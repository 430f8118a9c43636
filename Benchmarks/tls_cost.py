#!/usr/bin/env python3
"""What TLS costs `gatehouse serve` and `gatehouse gateway` against nginx terminating TLS with the same certificate (ECDSA P-256) and TLS 1.3,
in one run (issue 39, item 3), each server's CPU from its own counters (/proc/<pid>/stat):

- full handshakes: `openssl s_time -new -www /health` (a new TLS 1.3 session each time; the client is the limit, so
  the figure is the server's CPU per handshake, and handshakes per second per core = 1 / that);
- resumed handshakes: `openssl s_time -reuse -www /health` — TLS 1.3 session tickets; the share of connections the
  server actually resumed is printed (s_time marks each `r` when resumed, `*` when not);
- keep-alive HTTPS requests: `ab -k -f TLS1.3` on `GET /health`, requests per second and CPU µs per request.

    Benchmarks/tls_cost.py --gatehouse .build-release/release/gatehouse [--seconds 5] [--requests 20000]

scripts/bench-tls builds the release binary and runs this. Everything listens on loopback ports the kernel chose;
every measurement is bounded in time.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from phone_traffic import IDLE, POLICY, cleaner, cpu_seconds, make_certificate, measure_idle, start_gatehouse, start_nginx  # noqa: E402
from gateway_connections import start_gateway  # noqa: E402


def handshakes(port, mode, seconds, pids):
    """`openssl s_time` for `seconds` (mode `-new` or `-reuse`): connections, their rate, CPU µs each, resumed share."""
    before, started = cpu_seconds(pids), time.monotonic()
    run = subprocess.run(["openssl", "s_time", "-connect", f"127.0.0.1:{port}", mode, "-time", str(seconds), "-www", "/health"],
                         capture_output=True, text=True, timeout=seconds * 4 + 30)
    cpu, elapsed = cpu_seconds(pids) - before, time.monotonic() - started
    text = run.stdout
    # With -reuse, s_time first times new sessions then reused ones; the last summary is the mode asked for.
    counts = re.findall(r"(\d+) connections in ([\d.]+) real seconds", text)
    if not counts:
        raise SystemExit(f"openssl s_time printed no summary: {text[-500:]} {run.stderr[-500:]}")
    total = sum(int(count) for count, _ in counts)
    marks = "".join(re.findall(r"^[*r]+$", text, re.MULTILINE))
    resumed = marks.count("r") / max(1, len(marks))
    busy = cpu - IDLE.get(tuple(pids), 0) * elapsed
    return {"connections": total, "per_second": total / elapsed, "cpu_us": busy / max(1, total) * 1e6, "resumed": resumed}


def keep_alive_requests(port, count, pids):
    """`ab -k -c 8 -n count` over TLS 1.3: requests per second and CPU µs per request."""
    before, started = cpu_seconds(pids), time.monotonic()
    run = subprocess.run(["ab", "-q", "-k", "-c", "8", "-n", str(count), "-f", "TLS1.3", f"https://127.0.0.1:{port}/health"],
                         capture_output=True, text=True, timeout=300)
    cpu, elapsed = cpu_seconds(pids) - before, time.monotonic() - started
    rate = re.search(r"Requests per second:\s+([\d.]+)", run.stdout)
    failed = re.search(r"Failed requests:\s+(\d+)", run.stdout)
    if not rate:
        raise SystemExit(f"ab printed no rate: {run.stdout[-800:]} {run.stderr[-500:]}")
    busy = cpu - IDLE.get(tuple(pids), 0) * elapsed
    return {"per_second": float(rate.group(1)), "cpu_us": busy / count * 1e6, "failed": int(failed.group(1)) if failed else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=".build-release/release/gatehouse")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of each openssl s_time run (default 5)")
    parser.add_argument("--requests", type=int, default=20000, help="keep-alive requests per server (default 20000)")
    parser.add_argument("--nginx-workers", type=int, default=1,
                        help="nginx's worker processes (default 1; our servers run an event loop per core)")
    parser.add_argument("--event-loops", type=int, help="`--event-loops` of serve and the gateway (default: one per core)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="gatehouse-tls-"))
    processes = []
    stop_all = cleaner(processes, folder)
    try:
        (folder / "policy.yaml").write_text(POLICY)
        make_certificate(folder)
        loops = ["--event-loops", str(args.event_loops)] if args.event_loops else []
        gatehouse, gatehouse_port = start_gatehouse(args.gatehouse, folder, tls=True, extra=loops)
        processes.append(gatehouse)
        gateway, gateway_port = start_gateway(args.gatehouse, folder, "gateway", tls=True, extra=loops)
        processes.append(gateway)
        nginx, nginx_port, nginx_pids = start_nginx(folder, tls=True, workers=args.nginx_workers)
        if nginx is None:
            raise SystemExit("nginx is not installed (apt-get install nginx-light)")
        processes.append(nginx)
        servers = [("gatehouse serve", gatehouse_port, [gatehouse.pid]), ("gatehouse gateway", gateway_port, [gateway.pid]),
                   ("nginx", nginx_port, nginx_pids)]
        print(f"TLS 1.3, ECDSA P-256; gatehouse serve (pid {gatehouse.pid}) on {gatehouse_port}, gatehouse gateway (pid {gateway.pid}, "
              f"its own /health) on {gateway_port}, {args.event_loops or 'an'} event loop(s){'' if args.event_loops else ' per core'} each; "
              f"nginx ({args.nginx_workers} worker(s)) on {nginx_port}; "
              "CPU from /proc/<pid>/stat, less each server's idle CPU")
        for label, _, pids in servers:
            measure_idle(label, pids, seconds=4)
        rows = {}
        for label, port, pids in servers:
            rows[label] = {"new": handshakes(port, "-new", args.seconds, pids),
                           "reuse": handshakes(port, "-reuse", args.seconds, pids),
                           "kept": keep_alive_requests(port, args.requests, pids)}
        nginx_row = rows["nginx"]
        print(f"\n{'':18}{'full handshake':>30}{'resumed (tickets)':>36}{'keep-alive GET /health':>34}")
        print(f"{'server':18}{'per s':>9}{'CPU µs':>9}{'÷ nginx':>12}{'per s':>9}{'CPU µs':>9}{'resumed':>9}{'÷ nginx':>9}"
              f"{'req/s':>9}{'CPU µs':>9}{'÷ nginx':>9}{'failed':>7}")
        for label, row in rows.items():
            # ÷ nginx: nginx's CPU per operation over this server's — the share of nginx's rate per core it reaches.
            print(f"{label:18}{row['new']['per_second']:>9.0f}{row['new']['cpu_us']:>9.0f}"
                  f"{nginx_row['new']['cpu_us'] / row['new']['cpu_us']:>12.2f}"
                  f"{row['reuse']['per_second']:>9.0f}{row['reuse']['cpu_us']:>9.0f}{row['reuse']['resumed']:>9.0%}"
                  f"{nginx_row['reuse']['cpu_us'] / row['reuse']['cpu_us']:>9.2f}"
                  f"{row['kept']['per_second']:>9.0f}{row['kept']['cpu_us']:>9.1f}"
                  f"{nginx_row['kept']['cpu_us'] / row['kept']['cpu_us']:>9.2f}{row['kept']['failed']:>7}")
        print("\n÷ nginx is nginx's CPU per operation over the server's: the share of nginx's operations per core it reaches "
              "(targets: ≥ 0.8 for handshakes, ≥ 0.9 for keep-alive requests).")
        return 1 if any(row["kept"]["failed"] for row in rows.values()) else 0
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
