#!/usr/bin/env python3
"""A TCP relay that hands each HTTP/1.1 request on in several writes: the head, then the body in pieces.

    python3 Tests/Browser/splitting_relay.py --target 127.0.0.1:8080 [--port 0] [--pause 0.012]

Real networks and proxies split requests; a server that answers only a body arriving with its head (issue 53: an
emulated upload whose body came in a later read got no answer) passes every test on loopback, where a browser's
request lands in one read. This relay sits between a client and a server on loopback and, for every request of
every connection (keep-alive included): reads the whole head (up to the blank line), then the whole body (by its
Content-Length, or chunked up to the last chunk and its trailers, framing kept as it came), and writes the head, then
the body cut at byte 1, a third, two thirds and its last byte (up to five pieces), each write drained and followed
by a pause (`pause` seconds, 12 ms by default) so that the server reads them separately. Responses go back
unchanged as they come (streaming: KAAZING's emulated downstream is one long response). A request with `Upgrade`
is written whole and the connection relayed untouched from then on.

Every wait is bounded (connecting, an idle connection, a head or body in progress, a drain); a request head over
64 KiB or a body over 8 MiB closes the connection. `records` lists what was relayed (method, path, sizes, writes),
`summary()` counts them, and the log file has a line per request.

`fault` exists only to show that a test using the relay can fail: "drop-last-piece" never sends the last piece of
an emulated upload's body (`POST …/;e/ub…` or `…/;e/ut…`, KAAZING's upstream requests), "no-split" writes every
request whole (as it came, nothing split).
"""

import argparse
import asyncio
import re
import socket
import threading
import time

HEAD_LIMIT = 64 * 1024
BODY_LIMIT = 8 * 1024 * 1024
CONNECT_TIMEOUT = 5.0
IDLE_TIMEOUT = 60.0       # a kept-alive connection with nothing coming (the emulated downstream has a NOP every 20 s)
TRANSFER_TIMEOUT = 15.0   # the rest of a head or body once it started, and each drain
READ_SIZE = 64 * 1024
UPLOAD = re.compile(r"/;e/u[bt][a-z]*/")   # KAAZING's emulated upstream requests: ;e/ub, ubm, ut, utm, ute, utem
FAULTS = ("drop-last-piece", "no-split")


class RelayClosed(Exception):
    """The connection ends: the peer closed, a bound was passed or a wait timed out (the reason as message)."""


class Record:
    """One relayed request: its connection and number there, method, path, head and body sizes, and the sizes of the
    writes its body went in (empty for a request without a body)."""

    def __init__(self, connection, number, method, path, head_size, body_size, body_writes, dropped):
        self.connection = connection
        self.number = number
        self.method = method
        self.path = path
        self.head_size = head_size
        self.body_size = body_size
        self.body_writes = body_writes
        self.dropped = dropped

    @property
    def is_upload(self):
        return self.method == "POST" and UPLOAD.search(self.path) is not None

    @property
    def split(self):
        """Whether the body went in more than one write (after the head's own)."""
        return len(self.body_writes) >= 2

    def line(self):
        pieces = "+".join(str(size) for size in self.body_writes) or "-"
        dropped = f" (last piece of {self.dropped} bytes dropped: fault)" if self.dropped else ""
        return (f"#{self.connection}.{self.number} {self.method} {self.path} head {self.head_size} B, "
                f"body {self.body_size} B in {len(self.body_writes)} writes [{pieces}]{dropped}")


def cuts(size):
    """Where a body of `size` bytes is cut: after its first byte, at a third, at two thirds, before its last byte."""
    if size == 0:
        return []
    points = sorted({point for point in (1, size // 3, 2 * size // 3, size - 1) if 0 < point < size})
    bounds = [0] + points + [size]
    return [(bounds[index], bounds[index + 1]) for index in range(len(bounds) - 1)]


def parse_head(head):
    """(method, target, headers as lower-case name -> list of values) of a request head, or RelayClosed."""
    try:
        text = head.decode("iso-8859-1")
    except UnicodeDecodeError as error:  # iso-8859-1 decodes any byte; kept for clarity
        raise RelayClosed(f"head not decodable: {error}") from error
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise RelayClosed(f"not an HTTP/1.x request line: {lines[0][:200]!r}")
    headers = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise RelayClosed(f"malformed header line: {line[:200]!r}")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return parts[0], parts[1], headers


class SplittingRelay:
    """The relay on a free loopback port, forwarding to 127.0.0.1:`target_port`, in a thread of its own until
    `stop()`. `port` is where it listens."""

    def __init__(self, target_port, log_path=None, pause=0.012, fault=None):
        if fault not in (None,) + FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.target_port = target_port
        self.pause = pause
        self.fault = fault
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self.lock = threading.Lock()
        self.records = []
        self.connections = 0           # client connections accepted
        self.upstream_connections = 0  # connections made to the target (one per client connection)
        self.port = None
        self._writers = set()    # every open stream, closed by stop()
        self._tasks = set()      # every connection's handler, cancelled by stop()
        self.loop = asyncio.new_event_loop()
        self._stop = None
        ready = threading.Event()

        async def main():
            self._stop = asyncio.Event()
            server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            async with server:
                await self._stop.wait()
                server.close()
                for writer in list(self._writers):
                    writer.close()
                running = [task for task in self._tasks if not task.done()]
                for task in running:
                    task.cancel()
                if running:
                    await asyncio.wait(running, timeout=2)

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(main()), daemon=True,
                                       name="splitting-relay")
        self.thread.start()
        if not ready.wait(15):
            raise RuntimeError("the splitting relay did not start")
        self._log(f"relay on 127.0.0.1:{self.port} -> 127.0.0.1:{target_port}, pause {self.pause * 1000:.0f} ms"
                  + (f", fault {fault}" if fault else ""))

    def stop(self):
        if self._stop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(5)
        if self.log_file:
            self.log_file.close()
            self.log_file = None

    def _log(self, message):
        with self.lock:
            if self.log_file:
                self.log_file.write(f"{time.strftime('%H:%M:%S')} {message}\n")
                self.log_file.flush()

    def snapshot(self):
        with self.lock:
            return list(self.records)

    def summary(self):
        """Counts of what was relayed so far, in words and as a dict."""
        records = self.snapshot()
        uploads = [record for record in records if record.is_upload]
        counts = {
            "connections": self.connections,
            "requests": len(records),
            "split": sum(1 for record in records if record.split),
            "writes": sum(1 + len(record.body_writes) for record in records),
            "uploads": len(uploads),
            "uploads_split": sum(1 for record in uploads if record.split),
            "largest_upload": max((record.body_size for record in uploads), default=0),
        }
        words = (f"{counts['connections']} connections, {counts['requests']} requests in {counts['writes']} writes, "
                 f"{counts['split']} split; emulated uploads {counts['uploads_split']}/{counts['uploads']} split, "
                 f"largest {counts['largest_upload']} B")
        return words, counts

    # ---------------------------------------------------------------------------------------------- connections

    async def _connection(self, client_reader, client_writer):
        task = asyncio.current_task()
        self._tasks.add(task)
        self._writers.add(client_writer)
        try:
            await self._relay(client_reader, client_writer)
        finally:
            self._tasks.discard(task)
            self._writers.discard(client_writer)

    async def _relay(self, client_reader, client_writer):
        with self.lock:
            self.connections += 1
            number = self.connections
        try:
            server_reader, server_writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.target_port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as error:
            self._log(f"#{number} cannot reach 127.0.0.1:{self.target_port}: {error!r}")
            client_writer.close()
            return
        with self.lock:
            self.upstream_connections += 1
        self._writers.add(server_writer)
        for writer in (client_writer, server_writer):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        requests = asyncio.ensure_future(self._requests(number, client_reader, server_writer))
        responses = asyncio.ensure_future(self._pipe(f"#{number} responses", server_reader, client_writer))
        done, pending = await asyncio.wait({requests, responses}, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            reason = task.exception()
            if reason is not None:
                self._log(f"#{number} ends: {reason}")
        if responses in done:
            # The server closed: nothing more can be answered.
            requests.cancel()
        else:
            # The client stopped sending (closed, or a bound passed): what the server still answers goes back, a while.
            try:
                await asyncio.wait_for(asyncio.shield(responses), 2.0)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - closing anyway
                responses.cancel()
        for task in (requests, responses):
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - logged above when it mattered
                pass
        for writer in (client_writer, server_writer):
            writer.close()
        self._writers.discard(server_writer)
        self._log(f"#{number} closed")

    async def _read(self, reader, timeout, what):
        try:
            data = await asyncio.wait_for(reader.read(READ_SIZE), timeout)
        except asyncio.TimeoutError:
            raise RelayClosed(f"{what}: nothing for {timeout:.0f} s") from None
        except OSError as error:
            raise RelayClosed(f"{what}: {error!r}") from None
        return data

    async def _write(self, writer, data):
        writer.write(data)
        try:
            await asyncio.wait_for(writer.drain(), TRANSFER_TIMEOUT)
        except asyncio.TimeoutError:
            raise RelayClosed(f"a write of {len(data)} bytes not drained within {TRANSFER_TIMEOUT:.0f} s") from None
        except OSError as error:
            raise RelayClosed(f"write: {error!r}") from None

    async def _pipe(self, what, reader, writer):
        """Relays bytes as they come until the reader's end (then half-closes the writer) or a bound."""
        while True:
            data = await self._read(reader, IDLE_TIMEOUT, what)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                raise RelayClosed(f"{what}: end of stream")
            await self._write(writer, data)

    async def _requests(self, number, reader, writer):
        buffer = bytearray()
        count = 0
        while True:
            # The head: up to its blank line (an idle connection may wait IDLE_TIMEOUT for it, the rest of it less).
            while (end := buffer.find(b"\r\n\r\n")) < 0:
                if len(buffer) > HEAD_LIMIT:
                    raise RelayClosed(f"#{number}: a request head over {HEAD_LIMIT} bytes")
                data = await self._read(reader, TRANSFER_TIMEOUT if buffer else IDLE_TIMEOUT, f"#{number} request head")
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    raise RelayClosed(f"#{number}: the client closed" + (" inside a head" if buffer else ""))
                buffer += data
            head = bytes(buffer[:end + 4])
            del buffer[:end + 4]
            method, target, headers = parse_head(head)
            count += 1

            if "upgrade" in headers:
                await self._write(writer, head + bytes(buffer))
                self._add(Record(number, count, method, target, len(head), 0, [], 0))
                self._log(f"#{number}.{count} {method} {target}: Upgrade, relayed untouched from now on")
                await self._pipe(f"#{number} upgraded", reader, writer)
                return

            body = await self._body(number, reader, buffer, headers)
            record = Record(number, count, method, target, len(head), len(body), [], 0)
            if self.fault == "no-split":
                await self._write(writer, head + body)
                if body:
                    record.body_writes.append(len(body))
            else:
                await self._write(writer, head)
                pieces = [body[start:stop] for start, stop in cuts(len(body))]
                if self.fault == "drop-last-piece" and record.is_upload and len(pieces) > 1:
                    record.dropped = len(pieces.pop())
                for piece in pieces:
                    await asyncio.sleep(self.pause)
                    await self._write(writer, piece)
                    record.body_writes.append(len(piece))
            self._add(record)
            self._log(record.line())

    def _add(self, record):
        with self.lock:
            self.records.append(record)

    async def _fill(self, number, reader, buffer, size):
        """Reads until `buffer` holds at least `size` bytes."""
        while len(buffer) < size:
            data = await self._read(reader, TRANSFER_TIMEOUT, f"#{number} request body")
            if not data:
                raise RelayClosed(f"#{number}: the client closed inside a body")
            buffer += data

    async def _body(self, number, reader, buffer, headers):
        """The request's body as it came (chunked framing kept), taken out of `buffer`."""
        encodings = ",".join(headers.get("transfer-encoding", [])).lower()
        if "chunked" in encodings:
            position = 0
            while True:   # each chunk: size line, data, CRLF; the last (size 0), then trailers up to a blank line
                while (line_end := buffer.find(b"\r\n", position)) < 0:
                    await self._fill(number, reader, buffer, len(buffer) + 1)
                    if len(buffer) > BODY_LIMIT:
                        raise RelayClosed(f"#{number}: a chunked body over {BODY_LIMIT} bytes")
                size_text = bytes(buffer[position:line_end]).split(b";")[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise RelayClosed(f"#{number}: a malformed chunk size {size_text[:40]!r}") from None
                position = line_end + 2
                if size == 0:
                    while True:   # trailer lines up to the blank one
                        while (trailer_end := buffer.find(b"\r\n", position)) < 0:
                            if len(buffer) > BODY_LIMIT:
                                raise RelayClosed(f"#{number}: a chunked body's trailers over {BODY_LIMIT} bytes")
                            await self._fill(number, reader, buffer, len(buffer) + 1)
                        blank = trailer_end == position
                        position = trailer_end + 2
                        if blank:
                            break
                    break
                if position + size + 2 > BODY_LIMIT:
                    raise RelayClosed(f"#{number}: a chunked body over {BODY_LIMIT} bytes")
                await self._fill(number, reader, buffer, position + size + 2)
                position += size + 2
            body = bytes(buffer[:position])
            del buffer[:position]
            return body
        lengths = headers.get("content-length", [])
        if not lengths:
            return b""
        try:
            length = int(lengths[0])
        except ValueError:
            raise RelayClosed(f"#{number}: a malformed Content-Length {lengths[0][:40]!r}") from None
        if length < 0 or length > BODY_LIMIT:
            raise RelayClosed(f"#{number}: a Content-Length of {length} (bound {BODY_LIMIT})")
        await self._fill(number, reader, buffer, length)
        body = bytes(buffer[:length])
        del buffer[:length]
        return body


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, help="host:port to relay to (127.0.0.1 only)")
    parser.add_argument("--pause", type=float, default=0.012)
    parser.add_argument("--fault", choices=FAULTS, default=None)
    parser.add_argument("--log", default="/dev/stdout")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    if host not in ("127.0.0.1", "localhost"):
        parser.error("the relay forwards to loopback only")
    relay = SplittingRelay(int(port), args.log, pause=args.pause, fault=args.fault)
    print(f"splitting relay listens on 127.0.0.1:{relay.port}", flush=True)
    try:
        while relay.thread.is_alive():
            relay.thread.join(1)
    except KeyboardInterrupt:
        pass
    finally:
        relay.stop()
        print(relay.summary()[0], flush=True)


if __name__ == "__main__":
    main()
