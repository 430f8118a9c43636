import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po's `specification/ws.extensions/x-kaazing-idle-timeout/*/request.rpt` ([k3po/k3po](https://github.com/k3po/k3po),
/// Apache-2.0) — the scripts KAAZING Gateway plays against itself (`IdleTimeoutExtensionIT`, a 2 s
/// `ws.inactivity.timeout`, announced `timeout=2000`; 1 s here, announced `timeout=1000`) — and
/// `transport/wseb/.../should.negotiate.idle.timeout.extension.rpt` (the emulated transport's create,
/// `WsebIdleTimeoutExtensionIT`, 10 s), the client's side byte for byte against ``KeepAliveScriptGateway/timed``.
/// Each test is named after its script.
///
/// `standard.pong.frames.sent.by.server.no.client.timeout` and `extension.pong.frames.sent.by.server.no.client.timeout`
/// (which KAAZING runs against its acceptor alone, an upstream that never writes) play against `/proxy`, whose upstream
/// reads and never writes, the client writing every 150 ms (the scripts' `SEND_*` barriers) so that only the
/// gateway's writer is idle. Not played: the scripts of a client under test (`negative.timeout…`, `zero.timeout…`,
/// `no.data.sent.by.server.client.timeout`, `downstream.data.sent.by.server.no.client.timeout`), whose server is the
/// script.
@Suite(.timeLimit(.minutes(1))) struct IdleTimeoutExtensionScripts {
    static func connect() async throws -> (RawHTTPConnection, port: Int) {
        let port = try await KeepAliveScriptGateway.timed.port
        return (try RawHTTPConnection(port: port, timeout: .seconds(8)), port)
    }

    @Test("extension.ping.pong.frames.sent.by.server.no.client.timeout/request")
    func extensionPingPongFramesSentByServerNoClientTimeout() async throws {
        let (connection, port) = try await Self.connect()
        let (request, key) = KeepAliveScript.k3poUpgrade(port: port, extensions: "x-kaazing-idle-timeout,x-kaazing-ping-pong")
        await connection.send(request)
        #expect(try await KeepAliveScript.switched(connection, key: key) == ["x-kaazing-idle-timeout; timeout=1000", "x-kaazing-ping-pong; 01010102"])
        for _ in 1...2 {
            #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
            await connection.send(KeepAliveScript.masked(0x81, KeepAliveScript.control + [0x0A, 0x00]))
        }
        try await KeepAliveScript.close(connection)
    }

    @Test("standard.ping.pong.frames.sent.by.server.no.client.timeout/request")
    func standardPingPongFramesSentByServerNoClientTimeout() async throws {
        let (connection, port) = try await Self.connect()
        let (request, key) = KeepAliveScript.k3poUpgrade(port: port, extensions: "x-kaazing-idle-timeout")
        await connection.send(request)
        #expect(try await KeepAliveScript.switched(connection, key: key) == ["x-kaazing-idle-timeout; timeout=1000"])
        for _ in 1...2 {
            #expect(try await KeepAliveScript.read(connection, 2) == [0x89, 0x00])
            await connection.send(KeepAliveScript.masked(0x8A, []))
        }
        try await KeepAliveScript.close(connection)
    }

    @Test("standard.pong.frames.sent.by.server.no.client.timeout/request")
    func standardPongFramesSentByServerNoClientTimeout() async throws {
        try await Self.pongs(extensions: "x-kaazing-idle-timeout", announced: ["x-kaazing-idle-timeout; timeout=1000"], pong: [0x8A, 0x00])
    }

    @Test("extension.pong.frames.sent.by.server.no.client.timeout/request")
    func extensionPongFramesSentByServerNoClientTimeout() async throws {
        try await Self.pongs(extensions: "x-kaazing-idle-timeout,x-kaazing-ping-pong",
                             announced: ["x-kaazing-idle-timeout; timeout=1000", "x-kaazing-ping-pong; 01010102"], pong: KeepAliveScript.extendedPong)
    }

    /// The client writes `[0x82 0x82] ${writeMask} [0x11 0x11]` every 150 ms to an upstream that never answers: the
    /// gateway writes `pong` twice, each after 0.75 s of writing nothing.
    static func pongs(extensions: String, announced: [String], pong: [UInt8]) async throws {
        let (connection, port) = try await Self.connect()
        let (request, key) = KeepAliveScript.k3poUpgrade(port: port, "/proxy", extensions: extensions)
        await connection.send(request)
        let start = ContinuousClock.now
        #expect(try await KeepAliveScript.switched(connection, key: key) == announced)
        // Twelve writes, 150 ms apart: past both pongs.
        let writer = Task {
            for _ in 0..<12 {
                await connection.send(KeepAliveScript.masked(0x82, [0x11, 0x11]))
                try? await Task.sleep(for: .milliseconds(150))
            }
        }
        #expect(try await KeepAliveScript.read(connection, pong.count) == pong)
        #expect(KeepAliveScript.seconds(since: start) >= 0.7)
        #expect(try await KeepAliveScript.read(connection, pong.count) == pong)
        #expect(KeepAliveScript.seconds(since: start) >= 1.45)
        await writer.value
        try await KeepAliveScript.close(connection)
    }

    /// The emulated transport's create asks for the idle timeout (`X-WebSocket-Extensions`); the `201` announces it.
    @Test("wseb/should.negotiate.idle.timeout.extension") func shouldNegotiateIdleTimeoutExtension() async throws {
        let port = try await KeepAliveScriptGateway.timed.port
        let sequence = WSEScript.randomSequence()
        let (created, closed) = try await WSEScript.create(port: port, target: "/path/;e/cb?query",
                                                           fields: ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(sequence)",
                                                                    "X-WebSocket-Extensions: x-kaazing-idle-timeout"])
        #expect(created.status == 201)
        #expect(created.header("Content-Type")?.lowercased() == "text/plain;charset=utf-8")
        #expect(created.header("X-WebSocket-Extensions") == "x-kaazing-idle-timeout; timeout=10000")
        _ = try createdLocations(created, port: port)
        #expect(closed)
    }

    /// Beyond the script (which only negotiates): the idle timeout kept on the emulated transport too. An emulated
    /// WebSocket on `/proxy` (1 s, an upstream that never writes) whose create asked for the extension and accepts
    /// `PING`/`PONG` (`X-Accept-Commands: ping`) gets a `PONG` (`0x8A 0x00`) on its downstream after 0.75 s of nothing
    /// written, and another 0.75 s later.
    @Test func emulatedWebSocketGetsPongsOnItsDownstream() async throws {
        let port = try await KeepAliveScriptGateway.timed.port
        let source = WSEScript.freshSource()
        let sequence = WSEScript.randomSequence()
        let (created, _) = try await WSEScript.create(port: port, from: source, target: "/proxy/;e/cbm",
                                                      fields: ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(sequence)",
                                                               "X-Accept-Commands: ping", "X-WebSocket-Extensions: x-kaazing-idle-timeout"])
        #expect(created.header("X-WebSocket-Extensions") == "x-kaazing-idle-timeout; timeout=1000")
        let (_, downstreamPath) = try createdLocations(created, port: port)
        let downstream = try ScriptClient(port: port, from: source)
        let start = ContinuousClock.now
        await downstream.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        #expect(try await downstream.head().status == 200)
        // `0x8A 0x00` twice, read as bytes (a `NOP` heartbeat comes only every 20 s): a downstream without them times
        // out in the connection's read.
        #expect(try await downstream.read(4) == [0x8A, 0x00, 0x8A, 0x00])
        #expect(KeepAliveScript.seconds(since: start) >= 1.4)
    }
}
