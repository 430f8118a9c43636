#!/usr/bin/env python3
"""KAAZING's emulated WebSocket (`wseb-1.0`) against a native WebSocket, through the same `gatehouse gateway` process
in the same run: echo messages per second, their round trip p50/p99, and the gateway's CPU per message.

The gateway (a release binary) runs with a `Basic` realm (one user, bcrypt cost 10) in front of one WebSocket service
relaying to an echo upstream in a process of its own (`Benchmarks/idle_websockets.py --echo-upstream`, the
`websockets` package), set up as `scripts/bench-websockets` sets it up. Each round runs every mode once, one after the
other (the order turns each round, so the machine's drift falls on each mode in turn):

- `native`: N WebSockets (RFC 6455 upgrades with `Authorization: Basic`, the `websockets` package);
- `ctm`: N emulated sessions as KAAZING's JavaScript client opens them in today's browsers (`WebSocket-debug.js`,
  `WebSocketEmulatedProxy`): the create `GET <service>/;e/ctm?.kn=<random>` (`X-WebSocket-Version: wseb-1.0`,
  `X-Accept-Commands: ping`, `X-Sequence-No`), one long downstream `GET <downstream>?.ksn=n+1&.kc=text/plain;
  charset=windows-1252&.kb=4096&.kid=<random>` read as it streams, and for each message an upstream
  `POST <upstream>&.krn=<random>` (`Content-Type: text/plain; charset=utf-8`, `X-Sequence-No: n+1, n+2, ...`) whose
  body is the message's frame (`0x81`, its length, its UTF-8) and `RECONNECT`, each byte sent as the code point of
  its value (`0` as U+0100), on a kept-alive connection — a browser's XHRs;
- `cb` (unless `--encodings` leaves it out): the same with the binary encoding, as Gatehouse's Swift SDK and
  KAAZING's Java client (`cbm`) speak it: the create `POST <service>/;e/cb`, the upstream bodies the frames' bytes
  (`application/octet-stream`).

Then, in each mode, every one of the N sessions echoes M messages of S bytes of text one after the other (the next
sent once the echo came and, emulated, once the upstream `POST` was answered, as KAAZING's client waits for it), all N
at once (a round stops sending after --round-seconds: on a busy machine it counts fewer messages, and says so). Measured over those messages only (opening and closing left out): round trips per second, the round trip's
p50/p99 (sent → echo read; with N always in flight it is about N ÷ the rate), the gateway's CPU (user + system, /proc/<pid>/stat) per message, and beside it this
client's and the upstream's CPU per message (this client in Python is the load's own limit: compare the gateway's
CPU per message across modes, its throughput only with this in mind). Then every session is closed (`CLOSE` upstream,
the downstream ends with `CLOSE` and `RECONNECT`; a close frame natively) and the next mode begins.

    Benchmarks/emulated_websockets.py --gatehouse .build-release/release/gatehouse [--sessions 50] [--messages 200]
                                      [--size 64] [--rounds 3] [--encodings ctm,cb]

This protocol client is written here from KAAZING's JavaScript client and the protocol's description, not with
Gatehouse's SDK. Every loop is bounded in count and time, every network wait has a timeout (--timeout), the whole run
stops after --max-seconds; everything listens on loopback ports the kernel chose. scripts/bench-emulated runs this.
"""
import argparse
import asyncio
import base64
import collections
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from idle_websockets import (PASSWORD, TICKS, USER, describe, metrics, percentile, start_gateway, start_upstream,  # noqa: E402
                             stop_processes)

SERVICE = "/echo"
RECONNECT = b"\x01\x30\x31\xff"
CLOSE = b"\x01\x30\x32\xff"
MAX_DOWNSTREAMS = 1000  # downstream responses per session at most (each ends after 4 MiB, or a heartbeat's NOP)


def cpu(pid):
    """(user, system) CPU seconds of a process, from the kernel's counters."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan"), float("nan")
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def own_cpu():
    times = os.times()
    return times.user + times.system


# --- The emulated transport's wire format ----------------------------------------------------------------------------

def frame(kind, payload):
    """A length-prefixed frame: the type byte, the length in 7-bit groups (high bit on all but the last), the payload."""
    length = len(payload)
    groups = [length & 0x7F]
    length >>= 7
    while length:
        groups.append((length & 0x7F) | 0x80)
        length >>= 7
    return bytes([kind]) + bytes(reversed(groups)) + payload


def as_mixed_text(data):
    """KAAZING's JavaScript client's upstream body: each byte a code point (`0` as U+0100), sent as UTF-8."""
    return "".join(chr(0x100) if byte == 0 else chr(byte) for byte in data).encode("utf-8")


class FrameReader:
    """The downstream's frames as its bytes arrive (a frame cut across reads waits for the rest)."""

    def __init__(self, limit):
        self.buffer = bytearray()
        self.limit = limit

    def feed(self, data):
        self.buffer += data
        frames, index, buffer = [], 0, self.buffer
        while index < len(buffer):
            kind = buffer[index]
            if kind & 0x80 == 0:  # 0x00 text or 0x01 commands, up to 0xFF
                end = buffer.find(b"\xff", index + 1)
                if end < 0:
                    if len(buffer) - index > self.limit:
                        raise ValueError("a text frame over the limit")
                    break
                payload = bytes(buffer[index + 1:end])
                if kind == 0x00:
                    frames.append(("text", payload))
                elif kind == 0x01:
                    frames.extend(("command", payload[i:i + 2]) for i in range(0, len(payload), 2))
                else:
                    raise ValueError(f"an unknown frame type {kind:#x}")
                index = end + 1
                continue
            length, cursor, complete = 0, index + 1, False
            while cursor < len(buffer):
                byte = buffer[cursor]
                cursor += 1
                length = (length << 7) | (byte & 0x7F)
                if byte & 0x80 == 0:
                    complete = True
                    break
            if length > self.limit:
                raise ValueError("a frame over the limit")
            if not complete or len(buffer) - cursor < length:
                break
            payload = bytes(buffer[cursor:cursor + length])
            index = cursor + length
            names = {0x80: "binary", 0x81: "text", 0x89: "ping", 0x8A: "pong"}
            if kind not in names:
                raise ValueError(f"an unknown frame type {kind:#x}")
            frames.append((names[kind], payload))
        del self.buffer[:index]
        return frames


class HTTPError(Exception):
    pass


async def read_head(reader, timeout):
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise HTTPError(f"not an HTTP answer: {lines[0][:80]!r}")
    fields = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            fields[name.strip().lower()] = value.strip()
    return int(parts[1]), fields


async def read_body(reader, fields, timeout):
    """A body of a `Content-Length` or chunks (an answer the client waits for whole: never a downstream)."""
    if "content-length" in fields:
        return await asyncio.wait_for(reader.readexactly(int(fields["content-length"])), timeout)
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        for _ in range(10_000):  # bounded
            size = int((await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)).split(b";")[0], 16)
            chunk = await asyncio.wait_for(reader.readexactly(size + 2), timeout)
            if size == 0:
                return bytes(body)
            body += chunk[:-2]
        raise HTTPError("too many chunks")
    return b""


class Connection:
    """A kept-alive HTTP/1.1 connection (a browser's, for the create and the upstream `POST`s)."""

    def __init__(self, port, timeout):
        self.port, self.timeout = port, timeout
        self.reader = self.writer = None
        self.opened = 0

    async def request(self, head, body=b""):
        for attempt in range(2):  # a kept connection the server closed meanwhile is opened again, once
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), self.timeout)
                self.opened += 1
            try:
                self.writer.write(head + body)
                status, fields = await read_head(self.reader, self.timeout)
                answer = await read_body(self.reader, fields, self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if fresh or attempt:
                    raise
                continue
            if fields.get("connection", "").lower() == "close":
                self.close()
            return status, fields, answer
        raise HTTPError("unreachable")

    def close(self):
        if self.writer is not None:
            self.writer.transport.abort()
        self.reader = self.writer = None


class EmulatedSession:
    """One emulated WebSocket, its client side as KAAZING's clients play it."""

    def __init__(self, port, encoding, authorization, timeout, limit):
        self.port, self.encoding, self.timeout = port, encoding, timeout
        self.binary = encoding.startswith("cb")
        self.authorization = authorization
        self.upstream = Connection(port, timeout)
        self.messages = asyncio.Queue()
        self.reader = FrameReader(limit)
        self.downstream_task = None
        self.downstream_writer = None
        self.closed = asyncio.Event()  # the gateway ended the downstream with CLOSE
        self.downstreams = 0
        self.pings = 0
        self.failure = None

    def head(self, method, target, fields, body=b""):
        lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += fields
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def open(self):
        self.sequence = random.randrange(0, 1 << 31)
        nonce = str(random.random())[2:]
        target = f"{SERVICE}/;e/{self.encoding}?.kn={nonce}"
        fields = ["X-WebSocket-Version: wseb-1.0", f"X-Sequence-No: {self.sequence}", f"Authorization: {self.authorization}"]
        if self.binary:  # the Swift SDK's create
            method = "POST"
        else:  # the JavaScript client's
            method = "GET"
            fields = ["Content-Type: text/plain; charset=utf-8"] + fields + ["X-Accept-Commands: ping"]
        for attempt in range(6):  # 429 (this client's half-open sessions, or the source throttle): after Retry-After
            status, answer_fields, body = await self.upstream.request(self.head(method, target, fields))
            if status != 429:
                break
            await asyncio.sleep(min(2.0, float(answer_fields.get("retry-after", "1") or 1)))
        if status != 201:
            raise HTTPError(f"create answered {status}: {body[:120]!r}")
        lines = body.decode().split("\n")
        if len(lines) < 2 or "/;e/" not in lines[0] or "/;e/" not in lines[1]:
            raise HTTPError(f"create answered without its two URLs: {body[:200]!r}")
        strip = lambda url: re.sub(r"^https?://[^/]+", "", url.strip())  # noqa: E731 - on the create's origin
        self.upstream_path, self.downstream_path = strip(lines[0]), strip(lines[1])
        self.next_upstream = self.sequence + 1
        self.next_downstream = self.sequence + 1
        first = asyncio.get_running_loop().create_future()
        self.downstream_task = asyncio.create_task(self.read_downstreams(first))
        await asyncio.wait_for(first, self.timeout)

    async def read_downstreams(self, first):
        try:
            for _ in range(MAX_DOWNSTREAMS):
                if not await self.read_downstream(first):
                    return
            raise HTTPError("too many downstream responses")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - the session's failure, reported by its user
            self.failure = error
            if not first.done():
                first.set_exception(error)
            self.messages.put_nowait(None)

    async def read_downstream(self, first):
        """One downstream response, read as it streams; whether the gateway asked for the next (RECONNECT)."""
        sequence = self.next_downstream
        self.next_downstream += 1
        target = self.downstream_path + ("&" if "?" in self.downstream_path else "?") + f".ksn={sequence}"
        if not self.binary:
            target += f"&.kc=text/plain;charset=windows-1252&.kb=4096&.kid={str(random.random())[2:]}"
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), self.timeout)
        self.downstream_writer = writer
        self.downstreams += 1
        try:
            writer.write(self.head("GET", target, []))
            status, _ = await read_head(reader, self.timeout)
            if status != 200:
                raise HTTPError(f"downstream answered {status}")
            if not first.done():
                first.set_result(True)
            reconnect = False
            for _ in range(10_000_000):  # bounded: a read per frame at most, 4 MiB a response
                # The gateway sends a NOP every 20 s: a downstream silent for three is gone.
                data = await asyncio.wait_for(reader.read(65536), 60)
                if not data:
                    break
                for kind, payload in self.reader.feed(data):
                    if kind in ("text", "binary"):
                        self.messages.put_nowait(payload)
                    elif kind == "command" and payload == b"02":
                        self.closed.set()
                    elif kind == "command" and payload == b"01":
                        reconnect = True
                    elif kind == "ping":
                        self.pings += 1
            if self.closed.is_set():
                return False
            if not reconnect:
                raise HTTPError("the downstream ended without RECONNECT")
            return True
        finally:
            writer.transport.abort()

    async def send_frames(self, frames):
        sequence = self.next_upstream
        self.next_upstream += 1
        if self.binary:
            body = frames + RECONNECT
            target = self.upstream_path
            fields = ["Content-Type: application/octet-stream", f"X-Sequence-No: {sequence}"]
        else:
            body = as_mixed_text(frames + RECONNECT)
            target = self.upstream_path + "&.krn=" + str(random.random())  # as the JavaScript client writes it
            fields = ["Content-Type: text/plain; charset=utf-8", f"X-Sequence-No: {sequence}"]
        status, _, answer = await self.upstream.request(self.head("POST", target, fields, body), body)
        if status != 200:
            raise HTTPError(f"upstream POST answered {status}: {answer[:120]!r}")

    async def echo(self, text):
        await self.send_frames(frame(0x81, text))
        payload = await asyncio.wait_for(self.messages.get(), self.timeout)
        if payload is None:
            raise self.failure or HTTPError("the downstream ended")
        if payload != text:
            raise AssertionError(f"echo {payload[:40]!r} for {text[:40]!r}")

    async def close(self):
        try:
            await self.send_frames(CLOSE)
            await asyncio.wait_for(self.closed.wait(), self.timeout)
        finally:
            self.upstream.close()
            if self.downstream_task is not None:
                try:
                    await asyncio.wait_for(self.downstream_task, self.timeout)
                except BaseException:  # noqa: BLE001 - it is being left
                    self.downstream_task.cancel()
            if self.downstream_writer is not None:
                self.downstream_writer.transport.abort()

    def abort(self):
        self.upstream.close()
        if self.downstream_task is not None:
            self.downstream_task.cancel()
        if self.downstream_writer is not None:
            self.downstream_writer.transport.abort()


class NativeSession:
    """One RFC 6455 WebSocket through the gateway (the `websockets` package)."""

    def __init__(self, port, authorization, timeout, limit):
        self.url = f"ws://127.0.0.1:{port}{SERVICE}"
        self.authorization, self.timeout, self.limit = authorization, timeout, limit
        self.connection = None

    async def open(self):
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus
        for attempt in range(6):
            try:
                self.connection = await connect(self.url, additional_headers={"Authorization": self.authorization},
                                                ping_interval=None, compression=None, open_timeout=self.timeout,
                                                close_timeout=5, proxy=None, max_size=self.limit, user_agent_header=None)
                return
            except InvalidStatus as error:
                if error.response.status_code != 429 or attempt == 5:
                    raise
                await asyncio.sleep(min(2.0, float(error.response.headers.get("Retry-After", "1") or 1)))

    async def echo(self, text):
        await asyncio.wait_for(self.connection.send(text.decode()), self.timeout)
        answer = await asyncio.wait_for(self.connection.recv(), self.timeout)
        if answer.encode() != text:
            raise AssertionError(f"echo {answer[:40]!r} for {text[:40]!r}")

    async def close(self):
        await asyncio.wait_for(self.connection.close(), self.timeout)

    def abort(self):
        if self.connection is not None and self.connection.transport is not None:
            self.connection.transport.abort()


# --- A round of one mode ---------------------------------------------------------------------------------------------

async def run_mode(mode, args, gateway_pid, upstream_pid, port, authorization):
    """Open N sessions of `mode`, echo M messages on each (measured), close them: the round's figures."""
    make = (lambda: NativeSession(port, authorization, args.timeout, 1 << 20)) if mode == "native" else \
        (lambda: EmulatedSession(port, mode, authorization, args.timeout, 1 << 20))
    sessions = [make() for _ in range(args.sessions)]
    failures = collections.Counter()
    opening = asyncio.Semaphore(args.open_concurrency)  # the gateway bounds a client's half-open sessions (16)

    async def open_one(session):
        async with opening:
            await session.open()
            await session.echo(b"warm-up " + b"w" * max(0, args.size - 8))

    opened = await asyncio.gather(*(asyncio.wait_for(open_one(s), 4 * args.timeout) for s in sessions), return_exceptions=True)
    live = []
    for session, result in zip(sessions, opened):
        if isinstance(result, BaseException):
            failures[f"open: {describe(result)}"] += 1
            session.abort()
        else:
            live.append(session)
    await asyncio.sleep(0.3)  # what the opening left the gateway to do (a bcrypt on its pool) settles

    rtts = []
    filler = b"x" * args.size

    async def load(number, session):
        for index in range(args.messages):
            if time.perf_counter() > deadline:  # a machine too busy for M in time: the round ends with fewer
                stopped[0] += 1
                return
            text = (b"%05d %07d " % (number, index) + filler)[:args.size]
            began = time.perf_counter()
            try:
                await session.echo(text)
            except Exception as error:  # noqa: BLE001 - counted and reported
                failures[f"echo: {describe(error)}"] += 1
                return
            rtts.append((time.perf_counter() - began) * 1000)

    gateway_before, upstream_before, client_before = cpu(gateway_pid), cpu(upstream_pid), own_cpu()
    started = time.perf_counter()
    deadline, stopped = started + args.round_seconds, [0]
    await asyncio.wait_for(asyncio.gather(*(load(n, s) for n, s in enumerate(live))), args.round_seconds + 2 * args.timeout)
    seconds = time.perf_counter() - started
    gateway_after, upstream_after, client_after = cpu(gateway_pid), cpu(upstream_pid), own_cpu()

    closing = await asyncio.gather(*(s.close() for s in live), return_exceptions=True)
    for session, result in zip(live, closing):
        if isinstance(result, BaseException):
            failures[f"close: {describe(result)}"] += 1
            session.abort()
    count = len(rtts)
    user = gateway_after[0] - gateway_before[0]
    system = gateway_after[1] - gateway_before[1]
    extra = {}
    if mode != "native":
        extra = {"upstream connections": sum(s.upstream.opened for s in live), "downstreams": sum(s.downstreams for s in live),
                 "pings": sum(s.pings for s in live)}
    return {
        "mode": mode, "sessions": len(live), "messages": count, "seconds": seconds, "rate": count / seconds if seconds else 0,
        "p50": percentile(rtts, 0.5), "p99": percentile(rtts, 0.99), "rtts": rtts,
        "gateway_us": (user + system) / max(1, count) * 1e6, "gateway_user_us": user / max(1, count) * 1e6,
        "gateway_system_us": system / max(1, count) * 1e6,
        "upstream_us": (sum(upstream_after) - sum(upstream_before)) / max(1, count) * 1e6, "client_us": (client_after - client_before) / max(1, count) * 1e6,
        "failures": failures, "extra": extra, "stopped": stopped[0],
    }


async def run(args, gateway, port, upstream):
    authorization = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    modes = ["native"] + args.encodings
    results = collections.defaultdict(list)
    print(f"gateway pid {gateway.pid} on 127.0.0.1:{port}; {args.sessions} sessions x {args.messages} echoes of "
          f"{args.size} bytes per mode; {args.rounds} rounds of {', '.join(modes)}", flush=True)
    idle_before, t0 = sum(cpu(gateway.pid)), time.monotonic()
    await asyncio.sleep(2)
    idle = (sum(cpu(gateway.pid)) - idle_before) / (time.monotonic() - t0)
    for round_number in range(args.rounds):
        order = modes[round_number % len(modes):] + modes[:round_number % len(modes)]
        for mode in order:
            result = await run_mode(mode, args, gateway.pid, upstream.pid, port, authorization)
            results[mode].append(result)
            print(f"  round {round_number + 1} {mode:>6}: {result['messages']:6d} messages in {result['seconds']:5.2f} s "
                  f"= {result['rate']:7.0f}/s, p50 {result['p50']:6.2f} ms, p99 {result['p99']:6.2f} ms; gateway "
                  f"{result['gateway_us']:6.1f} us/message (user {result['gateway_user_us']:.1f}, system "
                  f"{result['gateway_system_us']:.1f}); client {result['client_us']:.0f} us, upstream "
                  f"{result['upstream_us']:.0f} us" + (f"; {dict(result['failures'])}" if result["failures"] else "")
                  + (f"; {result['stopped']} sessions stopped at --round-seconds" if result["stopped"] else ""),
                  flush=True)
            await asyncio.sleep(0.5)

    # The summary: pooled over the rounds, and each emulated mode ÷ native round by round (their median).
    expected = args.sessions * args.messages
    print(f"\nKAAZING emulated WebSocket vs native WebSocket through one `gatehouse gateway` ({args.sessions} sessions "
          f"x {args.messages} echoes of {args.size} bytes, {args.rounds} rounds; loopback, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the end; gateway idle {idle * 1000:.2f} ms/s)")
    print(f"{'mode':<8}{'messages/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'gateway us/msg':>16}{'(user':>7}{'sys)':>7}"
          f"{'client us':>11}{'upstream us':>13}")
    pooled = {}
    for mode in modes:
        rows = results[mode]
        count = sum(r["messages"] for r in rows)
        seconds = sum(r["seconds"] for r in rows)
        rtts = [t for r in rows for t in r["rtts"]]
        weigh = lambda key: sum(r[key] * r["messages"] for r in rows) / max(1, count)  # noqa: E731
        pooled[mode] = {"rate": count / seconds if seconds else 0, "gateway_us": weigh("gateway_us")}
        print(f"{mode:<8}{pooled[mode]['rate']:12.0f}{percentile(rtts, 0.5):9.2f}{percentile(rtts, 0.99):9.2f}"
              f"{pooled[mode]['gateway_us']:16.1f}{weigh('gateway_user_us'):7.1f}{weigh('gateway_system_us'):7.1f}"
              f"{weigh('client_us'):11.0f}{weigh('upstream_us'):13.0f}")
    code = 0
    for mode in args.encodings:
        rate_ratios = [e["rate"] / n["rate"] for e, n in zip(results[mode], results["native"]) if n["rate"]]
        cpu_ratios = [e["gateway_us"] / n["gateway_us"] for e, n in zip(results[mode], results["native"]) if n["gateway_us"]]
        print(f"{mode} / native: messages/s {pooled[mode]['rate'] / max(1e-9, pooled['native']['rate']):.2f}x pooled "
              f"(rounds {', '.join(f'{r:.2f}' for r in rate_ratios)}; median {statistics.median(rate_ratios):.2f}), "
              f"gateway CPU per message {pooled[mode]['gateway_us'] / max(1e-9, pooled['native']['gateway_us']):.2f}x pooled "
              f"(rounds {', '.join(f'{r:.2f}' for r in cpu_ratios)}; median {statistics.median(cpu_ratios):.2f})")
        extra = collections.Counter()
        for r in results[mode]:
            extra.update(r["extra"])
        print(f"  {mode}: {extra['upstream connections']} upstream connections for {sum(r['sessions'] for r in results[mode])} "
              f"sessions (kept alive), {extra['downstreams']} downstream responses, {extra['pings']} PINGs")
    for mode in modes:
        for r in results[mode]:
            if r["failures"] or r["sessions"] != args.sessions:
                code = 1
                print(f"problem: {mode}: {r['sessions']} of {args.sessions} sessions, {r['messages']} of {expected} echoes; "
                      f"{dict(r['failures'])}")
            elif r["messages"] != expected:
                print(f"note: {mode}: {r['messages']} of {expected} echoes, the round stopped at --round-seconds "
                      f"({args.round_seconds:.0f} s: a busy machine)")
    try:
        final = metrics(port)
        for name in ("gatehouse_gateway_websocket_upgrades_total", "authentications success", "authentications throttled",
                     "gatehouse_gateway_upstream_errors_total", "gatehouse_gateway_websockets_open"):
            if name in final:
                print(f"metric {name.replace('gatehouse_gateway_', '')} (whole run): {final[name]:.0f}")
    except Exception as error:  # noqa: BLE001 - reported
        print(f"problem: /metrics: {describe(error)}")
    return code


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=".build-release/release/gatehouse")
    parser.add_argument("--sessions", "-n", type=int, default=50, help="concurrent sessions per mode (default 50)")
    parser.add_argument("--messages", "-m", type=int, default=200, help="echoes per session per round (default 200)")
    parser.add_argument("--size", type=int, default=64, help="bytes of text per message (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each mode once per round (default 3)")
    parser.add_argument("--encodings", default="ctm,cb",
                        help="emulated encodings against native: ctm (KAAZING's JavaScript client), cb (the Swift SDK)")
    parser.add_argument("--open-concurrency", type=int, default=8, help="sessions being opened at once (default 8)")
    parser.add_argument("--timeout", type=float, default=10, help="every network wait, seconds (10)")
    parser.add_argument("--round-seconds", type=float, default=30,
                        help="the most one mode's echoes may take in a round; sessions stop there (30)")
    parser.add_argument("--max-seconds", type=float, default=600, help="the whole run (600)")
    args = parser.parse_args()
    args.encodings = [e for e in args.encodings.split(",") if e]
    if not all(e in ("ctm", "ct", "cb") for e in args.encodings) or not args.encodings:
        parser.error("--encodings: ctm, ct and cb")
    if not (1 <= args.sessions <= 2000 and 1 <= args.messages <= 100_000 and 16 <= args.size <= 60_000 and 1 <= args.rounds <= 20):
        parser.error("--sessions 1-2000, --messages 1-100000, --size 16-60000, --rounds 1-20")

    folder = Path(tempfile.mkdtemp(prefix="gatehouse-emulated-ws-"))
    processes = []

    def stop_all():
        stop_processes(processes, folder)

    signal.signal(signal.SIGTERM, lambda *_: (stop_all(), os._exit(1)))
    try:
        upstream, upstream_port = start_upstream(folder, args.max_seconds + 60)
        processes.append(upstream)
        gateway, gateway_port, gateway_log = start_gateway(args.gatehouse, folder, upstream_port)
        processes.append(gateway)
        version = subprocess.run([args.gatehouse, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        print(version)
        code = asyncio.run(asyncio.wait_for(run(args, gateway, gateway_port, upstream), args.max_seconds))
        log_lines = [line for line in Path(gateway_log).read_text(errors="replace").splitlines()
                     if re.search(r"\b(warning|error|critical)\b", line, re.I)]
        if log_lines:
            print(f"the gateway logged {len(log_lines)} warning/error lines, e.g.: " + " | ".join(log_lines[:3])[:600])
        if gateway.poll() is not None:
            print(f"the gateway exited with {gateway.returncode} during the run")
            code = 1
        return code
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
