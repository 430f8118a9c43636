#!/usr/bin/env python3
"""Idle authenticated WebSockets through `gatehouse gateway`: the gateway's memory per connection, its CPU while they
sit idle, and the echo round trip of a few active connections meanwhile.

The gateway (the release binary) runs with a `Basic` realm (one user, bcrypt cost 10) in front of a WebSocket service
that relays to an echo upstream: this script itself, started again as a separate process (`--echo-upstream`, the
`websockets` package), so the upstream's memory and CPU are never counted as the gateway's. Then, in order:

1. the gateway's CPU per second with nothing open;
2. ACTIVE connections (20) are opened, each sending one message every 50 ms for a while: echo round trip p50/p99
   with no idle connection (the baseline); the gateway's RSS is read after it (VmRSS, /proc/<pid>/status);
3. N idle connections are opened (`Authorization: Basic` on the upgrade; at most CONCURRENCY handshakes at a time),
   each sends one message and waits for its echo, then stays idle (no pings: `ping_interval=None` on both ends);
   RSS right after, and after IDLE seconds with no traffic at all, with the gateway's CPU per second over them;
4. the active connections again with N open: echo p50/p99, and the same load straight to the upstream (the client's
   and upstream's own share of the round trip);
5. every idle connection sends one more message (still alive after sitting idle?), then all are closed and the
   gateway's `/metrics` must come back to no open WebSocket;
6. N are opened again and closed (`--no-reopen` skips it): RSS with the second wave against the first (memory the
   allocator kept is used again; a leak would add another N's worth).

Memory per connection = (RSS with N open after the idle wait - RSS before) / N, in KiB: it covers both sides of the
relay (the client's socket and the upstream's), not the kernel's socket buffers (kernel TCP memory is printed apart,
from /proc/net/sockstat, for all sockets of the machine).

    Benchmarks/idle_websockets.py --gatehouse .build-release/release/gatehouse [--connections 8000] [--concurrency 200]
                                  [--active 20] [--interval 0.05] [--active-seconds 10] [--idle-seconds 10]

The gateway needs 2 file descriptors per connection (4 with none to spare at 50,000: ulimit -n must exceed 100,000);
its soft limit (raised to the hard one by the gateway at start), the upstream's and this process's are checked before
anything is opened. scripts/bench-websockets runs this. Every loop is bounded in count and time, every network wait
has a timeout, the whole run stops after --max-seconds; everything listens on loopback ports the kernel chose.
"""
import argparse
import asyncio
import base64
import collections
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
USER, PASSWORD = "bench", "bench-password"
SPARE_FDS = 200  # listeners, logs, the upstream pool, /metrics: what a process holds besides the relayed sockets


# --- The process's own counters -------------------------------------------------------------------------------------

def cpu_seconds(pid):
    """User + system CPU of the process, from the kernel's counters."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan")
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status(pid, field):
    """A `kB` (or count) field of /proc/<pid>/status, e.g. VmRSS, RssAnon, VmHWM, Threads."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def open_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def fd_limits(pid):
    """The process's (soft, hard) RLIMIT_NOFILE, from /proc/<pid>/limits."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    return -1, -1


def kernel_tcp_kib():
    """The kernel's TCP buffer memory for every socket of the machine (/proc/net/sockstat `TCP: ... mem` pages)."""
    match = re.search(r"^TCP:.* mem (\d+)", Path("/proc/net/sockstat").read_text(), re.M)
    return int(match.group(1)) * PAGE // 1024 if match else -1


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


# --- The echo upstream (a separate process: `--echo-upstream`) -------------------------------------------------------

async def echo_upstream(seconds):
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    async def echo(connection):
        try:
            async for message in connection:
                await connection.send(message)
        except ConnectionClosed:
            pass

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(echo, "127.0.0.1", 0, ping_interval=None, compression=None, max_size=1 << 20, close_timeout=5,
                     backlog=4096) as server:
        print(f"echo upstream listens on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
        try:
            await asyncio.wait_for(stop.wait(), seconds)  # bounded even if orphaned
        except asyncio.TimeoutError:
            pass


# --- Processes -------------------------------------------------------------------------------------------------------

def wait_for_port(process, log_path, pattern, what, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        match = re.search(pattern, Path(log_path).read_text(errors="replace"))
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{what} did not start: {Path(log_path).read_text(errors='replace')[-2000:]}")


def stop_processes(processes, folder):
    """Stops the processes started, last first (the gateway before its upstream: it closes its WebSockets with 1001),
    each SIGTERM then SIGKILL after 10 s, and removes the work folder."""
    for process in reversed(processes):
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        except Exception:  # noqa: BLE001 - already gone
            pass
    shutil.rmtree(folder, ignore_errors=True)


def start_upstream(folder, seconds):
    log = folder / "upstream.log"
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--echo-upstream", "--max-seconds", str(seconds)],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
    return process, wait_for_port(process, log, r"listens on 127\.0\.0\.1:(\d+)", "the echo upstream")


def start_gateway(binary, folder, upstream_port):
    hashed = subprocess.run([binary, "hash-password", "--cost", "10"], input=PASSWORD, capture_output=True, text=True,
                            check=True, timeout=60).stdout.strip().splitlines()[-1]
    (folder / "gateway.yaml").write_text(f"""host: 127.0.0.1
port: 0
realms:
  - name: bench
    description: Bench Realm
    scheme: Basic
    loginModules:
      - type: users
        flag: required
        users: [{{ username: {USER}, passwordHash: "{hashed}", roles: [AUTHORIZED] }}]
services:
  - {{ name: echo, path: /echo, upstream: "http://127.0.0.1:{upstream_port}/echo", realm: bench, requireRoles: [AUTHORIZED], webSocket: true }}
""")
    log = folder / "gateway.log"
    process = subprocess.Popen([binary, "gateway", "--config", str(folder / "gateway.yaml"), "--port", "0", "--log-level", "info"],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
    return process, wait_for_port(process, log, r"listens on http://127\.0\.0\.1:(\d+)", "the gateway"), log


def metrics(port):
    """The gateway's /metrics, each family summed over its labels (and authentications by result)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    totals = collections.defaultdict(float)
    for line in text.splitlines():
        match = re.match(r"^(gatehouse_gateway_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$", line)
        if not match:
            continue
        name, labels, value = match.group(1), match.group(2) or "", float(match.group(3))
        totals[name] += value
        result = re.search(r'result="([a-z_]+)"', labels)
        if name == "gatehouse_gateway_authentications_total" and result:
            totals[f"authentications {result.group(1)}"] += value
    return totals


# --- The client side -------------------------------------------------------------------------------------------------

class Client:
    TRIES = 4  # a handshake answered 429 (the source throttle) is tried again after its Retry-After, at most this often

    def __init__(self, url, authorization, timeout):
        self.url, self.timeout = url, timeout
        self.headers = {"Authorization": authorization} if authorization else {}
        self.throttled = 0  # handshakes answered 429, tried again

    async def open(self, label):
        """A WebSocket that has sent one message and had it echoed; with the seconds that took (429s and the waits
        they asked for included)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus
        began = time.perf_counter()
        for attempt in range(self.TRIES):
            try:
                connection = await connect(self.url, additional_headers=self.headers, ping_interval=None, compression=None,
                                           open_timeout=self.timeout, close_timeout=5, proxy=None, max_size=1 << 16,
                                           user_agent_header=None)
                break
            except InvalidStatus as error:
                if error.response.status_code != 429 or attempt == self.TRIES - 1:
                    raise
                self.throttled += 1
                retry_after = error.response.headers.get("Retry-After", "1")
                await asyncio.sleep(min(5.0, float(retry_after) if retry_after.isdigit() else 1.0))
        try:
            await echo(connection, f"hello from {label}", self.timeout)
        except BaseException:
            connection.transport.abort()
            raise
        return connection, time.perf_counter() - began


async def echo(connection, payload, timeout):
    await asyncio.wait_for(connection.send(payload), timeout)
    answer = await asyncio.wait_for(connection.recv(), timeout)
    if answer != payload:
        raise AssertionError(f"echo {answer[:40]!r} for {payload[:40]!r}")


def describe(error):
    text = f"{type(error).__name__}: {error}"
    return re.sub(r"\d+\.\d+\.\d+\.\d+:\d+", "<address>", text)[:160]


async def bounded(items, work, concurrency, seconds):
    """`work(item)` for each item, at most `concurrency` at once, none started after `seconds`; the results of the
    successes, the failures by kind, and how many were never started."""
    results, failures = [], collections.Counter()
    deadline = time.monotonic() + seconds
    queue = iter(list(enumerate(items)))
    skipped = 0

    async def worker():
        nonlocal skipped
        for index, item in queue:
            if time.monotonic() > deadline:
                skipped += 1
                continue
            try:
                results.append(await work(index, item))
            except Exception as error:  # noqa: BLE001 - counted and reported
                failures[describe(error)] += 1

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    return results, failures, skipped


async def active_load(connections, seconds, interval, timeout):
    """Each connection sends one message every `interval` (paced, staggered) for `seconds`: the round trips in ms."""
    rtts, failures = [], collections.Counter()
    rounds = int(seconds / interval) + 1

    async def run(number, connection):
        await asyncio.sleep(interval * number / len(connections))
        next_at = time.monotonic()
        for sequence in range(rounds):
            payload = f"active {number} message {sequence} " + "x" * 32
            began = time.perf_counter()
            try:
                await echo(connection, payload, timeout)
                rtts.append((time.perf_counter() - began) * 1000)
            except Exception as error:  # noqa: BLE001 - counted and reported
                failures[describe(error)] += 1
                return
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    await asyncio.wait_for(asyncio.gather(*(run(n, c) for n, c in enumerate(connections))), seconds + 4 * timeout + 5)
    return rtts, failures


async def close_all(connections, concurrency, seconds):
    async def close(_, connection):
        await asyncio.wait_for(connection.close(), 10)
        return True
    closed, failures, skipped = await bounded(connections, close, concurrency, seconds)
    for connection in connections:  # whatever did not close in time
        if connection.transport is not None and not connection.transport.is_closing():
            connection.transport.abort()
    return len(closed), failures, skipped


# --- The run ---------------------------------------------------------------------------------------------------------

async def run(args, gateway, gateway_port, upstream_port, gateway_log):
    pid = gateway.pid
    started = time.monotonic()
    left = lambda: args.max_seconds - (time.monotonic() - started) - 30  # noqa: E731 - keeps 30 s to close and report
    authorization = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    through = Client(f"ws://127.0.0.1:{gateway_port}/echo", authorization, args.timeout)
    direct = Client(f"ws://127.0.0.1:{upstream_port}/echo", None, args.timeout)
    rows, problems = [], []

    def row(name, value, note=""):
        rows.append((name, value, note))

    # The limits, before anything is opened.
    gateway_soft, gateway_hard = fd_limits(pid)
    need = 2 * (args.connections + args.active) + SPARE_FDS
    own_soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    print(f"gateway pid {pid} on 127.0.0.1:{gateway_port}, echo upstream on 127.0.0.1:{upstream_port}; "
          f"open-file limits: gateway {gateway_soft} (hard {gateway_hard}), this client {own_soft}")
    if gateway_soft < need or own_soft < args.connections + 2 * args.active + SPARE_FDS:
        print(f"N={args.connections} needs {need} descriptors in the gateway and {args.connections + 2 * args.active + SPARE_FDS} "
              f"here (gateway {gateway_soft}, here {own_soft}): lower --connections", file=sys.stderr)
        return 2

    # 1. Idle, nothing open.
    await asyncio.sleep(1)
    before_cpu, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(args.baseline_idle_seconds)
    idle_empty = (cpu_seconds(pid) - before_cpu) / (time.monotonic() - t0)

    # 2. The active connections, with no idle one: the baseline round trip; then RSS before.
    actives, failures, _ = await bounded(range(args.active), lambda i, _: through.open(f"active {i}"), args.active, 30)
    actives = [connection for connection, _ in actives]
    if failures or not actives:
        print(f"the active connections could not open: {dict(failures)}", file=sys.stderr)
        return 1
    base_rtts, base_failures = await active_load(actives, args.active_seconds, args.interval, args.timeout)
    await asyncio.sleep(1)
    rss_before, anon_before, tcp_before = status(pid, "VmRSS"), status(pid, "RssAnon"), kernel_tcp_kib()
    fds_before = open_fds(pid)

    # 3. N idle connections, each echoing one message, in batches.
    print(f"opening {args.connections} idle authenticated WebSockets, {args.concurrency} at a time ...", flush=True)
    open_started = time.monotonic()
    opened, open_failures, open_skipped = await bounded(
        range(args.connections), lambda i, _: through.open(f"idle {i}"), args.concurrency, min(args.open_seconds, left() - 60))
    open_seconds = time.monotonic() - open_started
    throttled_first = through.throttled
    idles = [connection for connection, _ in opened]
    handshakes = [seconds * 1000 for _, seconds in opened]
    count = len(idles)
    rss_open, hwm_open = status(pid, "VmRSS"), status(pid, "VmHWM")
    fds_open = open_fds(pid)
    print(f"  {count} open in {open_seconds:.1f} s; {sum(open_failures.values())} failed, {open_skipped} not tried", flush=True)

    cpu_before, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(args.idle_seconds)
    idle_open = (cpu_seconds(pid) - cpu_before) / (time.monotonic() - t0)
    rss_idle, anon_idle, tcp_idle = status(pid, "VmRSS"), status(pid, "RssAnon"), kernel_tcp_kib()
    threads = status(pid, "Threads")

    # 4. The active connections with N open, through the gateway and straight to the upstream.
    cpu_before = cpu_seconds(pid)
    rtts, active_failures = await active_load(actives, args.active_seconds, args.interval, args.timeout)
    cpu_per_message = (cpu_seconds(pid) - cpu_before) / max(1, len(rtts))
    direct_rtts, direct_failures = [], collections.Counter()
    if args.direct_seconds > 0:
        straight, failures, _ = await bounded(range(args.active), lambda i, _: direct.open(f"direct {i}"), args.active, 30)
        straight = [connection for connection, _ in straight]
        direct_failures.update(failures)
        if straight:
            direct_rtts, failures = await active_load(straight, args.direct_seconds, args.interval, args.timeout)
            direct_failures.update(failures)
        await close_all(straight, args.active, 20)
    rss_after_active = status(pid, "VmRSS")

    # 5. Every idle connection once more, then all closed.
    alive, verify_failures, verify_skipped = await bounded(
        idles, lambda i, connection: echo(connection, f"still there {i}", args.timeout), args.concurrency, max(10, min(60, left())))
    try:
        before_close = metrics(gateway_port)
    except Exception as error:  # noqa: BLE001 - reported
        before_close = {}
        problems.append(f"/metrics before closing: {describe(error)}")
    closed, close_failures, close_skipped = await close_all(idles + actives, args.concurrency, max(10, min(60, left() + 20)))
    open_after, after_close = -1, {}
    for _ in range(30):  # bounded: up to ~15 s for the gateway to count them closed
        try:
            after_close = metrics(gateway_port)
            open_after = after_close.get("gatehouse_gateway_websockets_open", -1)
        except Exception as error:  # noqa: BLE001 - reported below if it never answers
            problems.append(f"/metrics after closing: {describe(error)}")
        if open_after == 0:
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(1)
    rss_closed, anon_closed = status(pid, "VmRSS"), status(pid, "RssAnon")

    # 6. N again (memory kept by the allocator is used again; a leak would add another N's worth), then closed.
    rss_again, again_count, again_failures, again_open = -1, 0, collections.Counter(), -1
    if args.reopen and left() > 40:
        again, again_failures, _ = await bounded(
            range(args.connections), lambda i, _: through.open(f"again {i}"), args.concurrency, min(args.open_seconds, left() - 20))
        again = [connection for connection, _ in again]
        again_count = len(again)
        await asyncio.sleep(2)
        rss_again = status(pid, "VmRSS")
        await close_all(again, args.concurrency, max(10, min(60, left() + 20)))
        for _ in range(30):
            try:
                again_open = metrics(gateway_port).get("gatehouse_gateway_websockets_open", -1)
            except Exception:  # noqa: BLE001 - reported as -1
                again_open = -1
            if again_open == 0:
                break
            await asyncio.sleep(0.5)

    try:
        final = metrics(gateway_port)
    except Exception as error:  # noqa: BLE001 - reported
        final = after_close
        problems.append(f"/metrics at the end: {describe(error)}")

    # The table.
    per = lambda after: (after - rss_before) / count if count else float("nan")  # noqa: E731 - KiB per connection
    row("WebSockets asked / open / failed / not tried", f"{args.connections} / {count} / {sum(open_failures.values())} / {open_skipped}",
        f"{args.concurrency} handshakes at a time; {throttled_first} answered 429 and tried again")
    row("open rate (handshake + first echo)", f"{count / open_seconds:.0f} /s",
        f"each p50 {percentile(handshakes, 0.5):.1f} ms, p99 {percentile(handshakes, 0.99):.1f} ms")
    row("gateway RSS before (active ones open)", f"{rss_before / 1024:.1f} MiB", f"RssAnon {anon_before / 1024:.1f} MiB")
    row("gateway RSS with N open, just opened", f"{rss_open / 1024:.1f} MiB", f"VmHWM {hwm_open / 1024:.1f} MiB")
    row(f"gateway RSS with N open, after {args.idle_seconds:.0f} s idle", f"{rss_idle / 1024:.1f} MiB",
        f"RssAnon {anon_idle / 1024:.1f} MiB; {threads} threads")
    row("memory per idle WebSocket (after idle)", f"{per(rss_idle):.2f} KiB", "target <= 16 KiB; both sides of the relay")
    row("memory per idle WebSocket (just opened)", f"{per(rss_open):.2f} KiB",
        f"RssAnon only, after idle: {(anon_idle - anon_before) / max(1, count):.2f} KiB")
    row("  extrapolated to 50,000", f"{rss_before / 1024 + per(rss_idle) * 50000 / 1024:.0f} MiB",
        "RSS; needs ulimit -n > 100,000")
    row("kernel TCP memory (all sockets, sockstat)", f"{(tcp_idle - tcp_before) / 1024:+.1f} MiB",
        f"{(tcp_idle - tcp_before) / max(1, count):.2f} KiB per connection, gateway+client+upstream sockets")
    row("gateway file descriptors", f"{fds_before} -> {fds_open}", f"limit {gateway_soft}; {(fds_open - fds_before) / max(1, count):.2f} per connection")
    row("gateway CPU, idle, nothing open", f"{idle_empty * 1000:.2f} ms/s",
        f"over {args.baseline_idle_seconds:.0f} s; /proc ticks: resolution {1000 / TICKS / args.baseline_idle_seconds:.1f} ms/s")
    row("gateway CPU, idle, N open", f"{idle_open * 1000:.2f} ms/s",
        f"over {args.idle_seconds:.0f} s with no traffic; resolution {1000 / TICKS / args.idle_seconds:.1f} ms/s")
    echo_note = f"{args.active} connections, one message per {args.interval * 1000:.0f} ms each"
    row("echo via gateway, 0 idle: p50 / p99", f"{percentile(base_rtts, 0.5):.2f} / {percentile(base_rtts, 0.99):.2f} ms",
        f"{len(base_rtts)} messages; {echo_note}")
    row("echo via gateway, N idle: p50 / p99", f"{percentile(rtts, 0.5):.2f} / {percentile(rtts, 0.99):.2f} ms",
        f"{len(rtts)} messages; max {max(rtts, default=float('nan')):.2f} ms; target p99 <= 5 ms")
    if args.direct_seconds > 0:
        row("echo direct to upstream, N idle: p50 / p99", f"{percentile(direct_rtts, 0.5):.2f} / {percentile(direct_rtts, 0.99):.2f} ms",
            f"{len(direct_rtts)} messages; the client's and upstream's share")
    row("gateway CPU per active echo message", f"{cpu_per_message * 1e6:.0f} us", "includes its idle CPU")
    row("idle ones still echoing after the wait", f"{len(alive)} / {count}",
        f"{sum(verify_failures.values())} failed, {verify_skipped} not tried")
    row("closed cleanly", f"{closed} / {len(idles) + len(actives)}",
        f"{sum(close_failures.values())} failed, {close_skipped} not tried; websockets_open after: {open_after:.0f}")
    row("gateway RSS after closing all", f"{rss_closed / 1024:.1f} MiB",
        f"RssAnon {anon_closed / 1024:.1f} MiB; RSS after the active phase {rss_after_active / 1024:.1f} MiB")
    if rss_again >= 0:
        row("gateway RSS with N open again (2nd wave)", f"{rss_again / 1024:.1f} MiB",
            f"{again_count} open, {sum(again_failures.values())} failed, {through.throttled - throttled_first} answered 429 and "
            f"tried again; {(rss_again - rss_idle) / max(1, again_count):+.2f} KiB "
            f"per connection vs the 1st wave; websockets_open after closing: {again_open:.0f}")
    for name in ("gatehouse_gateway_websocket_upgrades_total", "authentications success", "authentications failure",
                 "authentications challenge", "authentications throttled", "gatehouse_gateway_accept_refused_total",
                 "gatehouse_gateway_upstream_errors_total", "gatehouse_gateway_websockets_expired_total"):
        if name in final:
            row(f"metric {name.replace('gatehouse_gateway_', '')} (whole run)", f"{final[name]:.0f}")

    width = max(len(name) for name, _, _ in rows) + 2
    print(f"\nidle authenticated WebSockets through `gatehouse gateway` (N = {args.connections}, loopback, "
          f"{os.cpu_count()} cores)")
    for name, value, note in rows:
        print(f"{name:{width}}{value:>22}  {note}")

    for label, counter in (("opening", open_failures), ("active, 0 idle", base_failures), ("active, N idle", active_failures),
                           ("direct", direct_failures), ("still echoing", verify_failures), ("closing", close_failures),
                           ("opening again", again_failures)):
        for kind, times in counter.most_common(3):
            problems.append(f"{label}: {times} x {kind}")
    if open_after != 0:
        problems.append(f"the gateway's websockets_open is {open_after:.0f} after every WebSocket was closed")
    log_lines = [line for line in Path(gateway_log).read_text(errors="replace").splitlines()
                 if re.search(r"\b(warning|error|critical)\b", line, re.I)]
    if through.throttled:
        problems.append(f"{through.throttled} handshakes with the right password were answered 429 (source throttle) and tried again")
    if log_lines:
        problems.append(f"the gateway logged {len(log_lines)} warning/error lines, e.g.: " + " | ".join(log_lines[:3])[:600])
    if problems:
        print("\nproblems:")
        for problem in problems:
            print(f"  {problem}")
    return 1 if (open_failures or open_skipped or verify_failures or active_failures or base_failures or again_failures) else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=".build-release/release/gatehouse")
    parser.add_argument("--connections", "-n", type=int, default=8000, help="idle WebSockets (default 8000)")
    parser.add_argument("--concurrency", type=int, default=200, help="handshakes in flight at most (default 200)")
    parser.add_argument("--active", type=int, default=20, help="active connections (default 20)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between an active one's messages (0.05)")
    parser.add_argument("--active-seconds", type=float, default=10, help="each active phase (default 10)")
    parser.add_argument("--direct-seconds", type=float, default=5, help="the same load straight to the upstream (5; 0: skip)")
    parser.add_argument("--idle-seconds", type=float, default=10, help="the idle wait with N open (default 10)")
    parser.add_argument("--baseline-idle-seconds", type=float, default=5, help="the idle CPU with nothing open (5)")
    parser.add_argument("--open-seconds", type=float, default=150, help="the most opening N may take (150)")
    parser.add_argument("--timeout", type=float, default=10, help="every network wait, seconds (10)")
    parser.add_argument("--max-seconds", type=float, default=280, help="the whole run (280)")
    parser.add_argument("--no-reopen", dest="reopen", action="store_false",
                        help="skip the second wave of N (opened after all are closed: does the memory come back?)")
    parser.add_argument("--gateway-log", metavar="PATH", help="copy the gateway's log there at the end")
    parser.add_argument("--echo-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    # Sockets: this process holds N + 2 x active; raise the soft limit to the hard one (as the gateway does).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.echo_upstream:
        asyncio.run(echo_upstream(args.max_seconds))
        return 0

    folder = Path(tempfile.mkdtemp(prefix="gatehouse-idle-ws-"))
    processes = []

    def stop_all():
        stop_processes(processes, folder)

    signal.signal(signal.SIGTERM, lambda *_: (stop_all(), os._exit(1)))
    try:
        upstream, upstream_port = start_upstream(folder, args.max_seconds + 60)
        processes.append(upstream)
        gateway, gateway_port, gateway_log = start_gateway(args.gatehouse, folder, upstream_port)
        processes.append(gateway)
        code = asyncio.run(asyncio.wait_for(run(args, gateway, gateway_port, upstream_port, gateway_log), args.max_seconds))
        if args.gateway_log:
            shutil.copyfile(gateway_log, args.gateway_log)
        upstream_log = (folder / "upstream.log").read_text(errors="replace")
        errors = [line for line in upstream_log.splitlines() if "Error" in line or "error" in line]
        if errors:
            print(f"  the echo upstream logged {len(errors)} error lines, e.g.: {errors[0][:300]}")
        if gateway.poll() is not None:
            print(f"the gateway exited with {gateway.returncode} during the run")
            code = 1
        return code
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
