import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/wse/…/closing/client.*/request.rpt`: the client ends an emulated WebSocket (`CLOSE` upstream)
/// or drops one of its requests, against the real gateway. The `server.*` scripts need an upstream that closes or
/// misbehaves on cue, which the echo upstream does not: not played.
@Suite(.timeLimit(.minutes(3))) struct WSEClosingScripts {
    /// This suite's client address (ScriptClient's `source`).
    static let source = "127.0.0.4"
    static let closeAndReconnect: [UInt8] = [0x01, 0x30, 0x32, 0xFF, 0x01, 0x30, 0x31, 0xFF]

    /// Waits (bounded) until the session of `upstream`'s URL is gone: a request to it answers `404`.
    static func expectGone(port: Int, _ opened: WSEScript.Opened) async throws {
        var status = 0
        for attempt in 0..<50 where status != 404 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(40)) }
            let probe = try await WSEScript.upstream(port: port, opened, sequence: opened.sequence + 9, body: [0x01, 0x30, 0x31, 0xFF], halfClose: true)
            status = try await probe.response().status
        }
        #expect(status == 404)
    }

    @Test("closing/client.send.close") func clientSendClose() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let upstream = try await WSEScript.upstream(port: port, opened, body: Self.closeAndReconnect, halfClose: true)
        #expect(try await upstream.response().status == 200)
        #expect(await upstream.closed())
        #expect(try await opened.downstream.read(8) == Self.closeAndReconnect)
        #expect(await opened.downstream.closed())
    }

    @Test("closing/client.send.close.no.reply.from.server") func clientSendCloseNoReplyFromServer() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let upstream = try await WSEScript.upstream(port: port, opened, body: Self.closeAndReconnect, halfClose: true)
        #expect(try await upstream.response().status == 200)
        #expect(await upstream.closed())
        // `write abort` on the downstream once the close is sent: the session ends all the same.
        opened.downstream.connection.abort()
        try await Self.expectGone(port: port, opened)
    }

    /// `write abort` on the downstream. KAAZING's server side only reads the abort; Gatehouse keeps the session for
    /// the client's next downstream (``EmulatedWebSocket/abandonedAfter``): a message sent meanwhile comes on it.
    @Test("closing/client.abruptly.closes.downstream") func clientAbruptlyClosesDownstream() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let (sequence, upstreamPath, downstreamPath) = (opened.sequence, opened.upstream, opened.downstreamPath)
        opened.downstream.connection.abort()
        // The reset reaches the gateway before the message's echo would be written to the dead downstream.
        try await Task.sleep(for: .milliseconds(200))
        let kept = Array("kept".utf8)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("POST", upstreamPath, ["Content-Type: application/octet-stream", "X-Sequence-No: \(sequence + 1)",
                                                  "Content-Length: \(kept.count + 2)"], body: [0x81, UInt8(kept.count)] + kept, halfClose: true)
        #expect(try await client.response().status == 200)
        let next = try ScriptClient(port: port, from: Self.source)
        await next.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 2)", "Content-Length: 0"], halfClose: true)
        #expect(try await next.head().status == 200)
        #expect(try await next.read(6) == [0x81, 0x04] + kept)
    }

    /// `write abort` on an upstream `POST` whose chunked body has not begun: the WebSocket ends — the downstream gets
    /// `CLOSE`, `RECONNECT` and its end — as KAAZING's server side writes it.
    @Test("closing/client.abruptly.closes.upstream") func clientAbruptlyClosesUpstream() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        do {
            let upstream = try ScriptClient(port: port, from: Self.source)
            await upstream.write("POST", opened.upstream, ["Content-Type: application/octet-stream", "Transfer-Encoding: chunked",
                                                           "X-Next-Protocol: wse/1.0", "X-Sequence-No: \(opened.sequence + 1)"])
            upstream.connection.abort()  // the connection ends inside the request
        }
        #expect(try await opened.downstream.read(8) == Self.closeAndReconnect)
        #expect(await opened.downstream.closed())
    }
}
