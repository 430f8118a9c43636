#!/usr/bin/env python3
"""A PostgreSQL wire-protocol proxy on a loopback port that, once, lets PostgreSQL answer a statement but never
commit it — what a server stopping between a statement's answer and its commit does (`pg_ctl stop`, fast or
immediate, in PostgresFaultTests' restart drill).

The first time a client sends a Parse whose SQL contains TARGET, the Sync that follows its Execute is replaced by a
Flush: PostgreSQL sends the statement's rows and CommandComplete but does not end the implicit transaction. The proxy
relays that answer, then closes both connections, so PostgreSQL rolls the statement back. A client that believes a
statement's CommandComplete has written nothing; one that waits for its own COMMIT's answer sees the connection fail.
Every other message passes unchanged. The fault fires once, then the proxy only relays.

    pg_unanswered_commit_proxy.py UPSTREAM_PORT TARGET     # prints "port N", later "fault fired" when it fires

Clients must not ask for TLS (sslmode=disable): the proxy reads the protocol's plain messages.
"""
import asyncio
import sys

UPSTREAM_PORT = int(sys.argv[1])
TARGET = sys.argv[2].encode()
FIRED = False


async def relay_connection(client_reader, client_writer):
    upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", UPSTREAM_PORT)
    state = {"armed": False, "executed": False, "close_after_answer": False}

    def close_both():
        client_writer.close()
        upstream_writer.close()

    async def client_to_server():
        global FIRED
        # The startup message has no type byte.
        header = await client_reader.readexactly(4)
        upstream_writer.write(header + await client_reader.readexactly(int.from_bytes(header, "big") - 4))
        while True:
            kind = await client_reader.readexactly(1)
            header = await client_reader.readexactly(4)
            body = await client_reader.readexactly(int.from_bytes(header, "big") - 4)
            if not FIRED and kind == b"P" and TARGET in body:
                state["armed"] = True
            if state["armed"] and kind == b"E":
                state["executed"] = True
            if state["executed"] and kind == b"S" and not FIRED:
                FIRED = True
                state["close_after_answer"] = True
                upstream_writer.write(b"H" + (4).to_bytes(4, "big"))   # Flush: answer, but do not end the transaction
                await upstream_writer.drain()
                print("fault fired", flush=True)
                continue
            upstream_writer.write(kind + header + body)
            await upstream_writer.drain()

    async def server_to_client():
        while True:
            kind = await upstream_reader.readexactly(1)
            header = await upstream_reader.readexactly(4)
            body = await upstream_reader.readexactly(int.from_bytes(header, "big") - 4)
            client_writer.write(kind + header + body)
            await client_writer.drain()
            if kind == b"C" and state["close_after_answer"]:
                await asyncio.sleep(0.05)   # the answer reaches the client before the connection ends
                close_both()
                return

    tasks = [asyncio.ensure_future(client_to_server()), asyncio.ensure_future(server_to_client())]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    close_both()


async def main():
    server = await asyncio.start_server(relay_connection, "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await asyncio.wait_for(server.serve_forever(), timeout=300)   # bounded: a forgotten proxy ends by itself


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (asyncio.TimeoutError, KeyboardInterrupt):
        pass
