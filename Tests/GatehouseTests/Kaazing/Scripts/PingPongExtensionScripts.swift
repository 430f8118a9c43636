import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po's `specification/ws.extensions/x-kaazing-ping-pong/*/request.rpt` ([k3po/k3po](https://github.com/k3po/k3po),
/// Apache-2.0) — the scripts KAAZING Gateway plays against itself (`PingPongExtensionIT` on an echo without an
/// inactivity timeout, `PingPongExtensionTimeoutIT` with one) — the client's side byte for byte against the real
/// gateway: `x-kaazing-ping-pong; 01010102` announced, the client's pings answered by the gateway (extended with
/// extended, standard with standard), an echoed text message that begins with the control bytes escaped, a binary
/// one not, and a client that answers no extended ping closed. Each test is named after its script.
///
/// `server.should.timeout.if.client.does.not.respond.to.extended.ping` plays against the 1 s timeout of
/// ``KeepAliveScriptGateway/timed`` (KAAZING's test: 4 s), the same exchange in a quarter of the time. Not played: the
/// `client.should.*` scripts, whose server is the script.
@Suite(.timeLimit(.minutes(1))) struct PingPongExtensionScripts {
    /// An upgrade of `/echo` asking for `x-kaazing-ping-pong`, switched, the extension announced.
    static func open(_ gateway: KeepAliveScriptGateway = .untimed) async throws -> RawHTTPConnection {
        let port = try await gateway.port
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(8))
        let (request, key) = KeepAliveScript.k3poUpgrade(port: port, extensions: "x-kaazing-ping-pong")
        await connection.send(request)
        let announced = try await KeepAliveScript.switched(connection, key: key)
        #expect(announced.count == 1)
        // `/x-kaazing-ping-pong; *(?<controlBytes>[a-fA-F0-9]{8})/`, read with `pp:parseHexString`.
        let hex = announced.first.map { String($0.drop { $0 != ";" }.dropFirst()).trimmingCharacters(in: .whitespaces) } ?? ""
        #expect(announced.first?.hasPrefix("x-kaazing-ping-pong") == true && hex.count == 8)
        let value = UInt32(hex, radix: 16) ?? 0
        #expect([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] == KeepAliveScript.control)
        return connection
    }

    @Test("server.should.reply.to.standard.ping.with.standard.pong/request") func serverShouldReplyToStandardPingWithStandardPong() async throws {
        let connection = try await Self.open()
        await connection.send(KeepAliveScript.masked(0x89, []))
        #expect(try await KeepAliveScript.read(connection, 2) == [0x8A, 0x00])
        try await KeepAliveScript.close(connection)
    }

    @Test("server.should.reply.to.extended.ping.with.extended.pong/request") func serverShouldReplyToExtendedPingWithExtendedPong() async throws {
        let connection = try await Self.open()
        await connection.send(KeepAliveScript.masked(0x81, KeepAliveScript.control + [0x09, 0x00]))
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPong)
        try await KeepAliveScript.close(connection)
    }

    /// The client's escape frame, then `control + "ABC"`: the upstream gets (and echoes) `control + "ABC"` alone, which
    /// the gateway sends after an escape frame of its own.
    @Test("should.escape.text.frame.starting.with.control.bytes/request") func shouldEscapeTextFrameStartingWithControlBytes() async throws {
        let connection = try await Self.open()
        await connection.send(KeepAliveScript.masked(0x81, KeepAliveScript.control))
        await connection.send(KeepAliveScript.masked(0x81, KeepAliveScript.control + Array("ABC".utf8)))
        #expect(try await KeepAliveScript.read(connection, 6) == [0x81, 0x04] + KeepAliveScript.control)
        #expect(try await KeepAliveScript.read(connection, 9) == [0x81, 0x07] + KeepAliveScript.control + Array("ABC".utf8))
        try await KeepAliveScript.close(connection)
    }

    @Test("should.not.escape.binary.frame/request") func shouldNotEscapeBinaryFrame() async throws {
        let connection = try await Self.open()
        await connection.send(KeepAliveScript.masked(0x82, KeepAliveScript.control + Array("ABC".utf8)))
        #expect(try await KeepAliveScript.read(connection, 9) == [0x82, 0x07] + KeepAliveScript.control + Array("ABC".utf8))
        try await KeepAliveScript.close(connection)
    }

    @Test("server.should.timeout.if.client.does.not.respond.to.extended.ping/request")
    func serverShouldTimeoutIfClientDoesNotRespondToExtendedPing() async throws {
        let connection = try await Self.open(.timed)
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        await connection.send(KeepAliveScript.masked(0x81, KeepAliveScript.control + [0x0A, 0x00]))
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        let (rest, closed) = await connection.readToEnd()
        #expect(rest.isEmpty && closed)
    }
}
