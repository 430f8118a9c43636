import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/httpx/…/{opening,extended}/*/request.rpt` (KAAZING's extended handshake: an HTTP request and
/// answer inside a WebSocket that selected `x-kaazing-handshake`), the client's side byte for byte — the script's
/// upgrade, its masked frames with their header bytes and mask — against the real gateway. Each test is named after its
/// script. Three details of the gateway's side deliberately follow KAAZING Gateway 5's wire (its own
/// `transport/wsn/…/handshake/canCompleteAnExtendedHandshakeFirstRequestAndNegotiateTheXKaazinghandshakeProtocol.rpt`
/// and `shouldPropagateSubjectExtendedHandshake.rpt`, and KAAZING's clients, which expect them) rather than the
/// specification's scripts: the balancer frame (`0x82 0x04 EF 83 BF 4E`) after each `101`, the empty binary frame
/// after the inner answer, and no `Server`/`Date` fields. The inner `401`'s body is Gatehouse's JSON error, not
/// KAAZING's HTML page (KAAZING's clients read the status and `WWW-Authenticate` only). The `response.code.101`,
/// `.200`, `.302` and `opening/extended.handshake.protocol.not.negotiated` scripts test a client's reaction to a
/// server's answers: not played.
@Suite(.timeLimit(.minutes(3))) struct HTTPXExtendedScripts {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    static let balancer = KaazingWire.Frame(opcode: 0x2, payload: [0xEF, 0x83, 0xBF, 0x4E])

    /// The script's upgrade (`write http:header …` in its order) to `path`, and the outer `101`'s checks; the balancer
    /// frame read. `extensions`: the script's `Sec-WebSocket-Extensions`.
    static func open(_ path: String, extensions: String? = nil) async throws -> (wire: KaazingWire, answer: RawHTTPResponse) {
        let port = try await ScriptGateway.shared.port
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(20))
        await connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: x-kaazing-handshake\r\n"
                              + (extensions.map { "Sec-WebSocket-Extensions: \($0)\r\n" } ?? "") + "\r\n")
        guard let answer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        #expect(answer.status == 101)
        #expect(answer.header("Upgrade")?.lowercased() == "websocket")
        #expect(answer.header("Connection")?.lowercased() == "upgrade")
        #expect(answer.header("Sec-WebSocket-Accept") == accept)
        #expect(answer.header("Sec-WebSocket-Protocol") == "x-kaazing-handshake")
        let wire = KaazingWire(connection: connection)
        #expect(try await wire.frame() == balancer)
        return (wire, answer)
    }

    /// `write [header] ${writeMask}`, `write option mask ${writeMask}`, `write "…"`: the frame's two header bytes as the
    /// script writes them, a random mask, the payload masked.
    static func write(_ wire: KaazingWire, header: [UInt8], _ payload: [UInt8]) async throws {
        #expect(Int(header[1] & 0x7F) == payload.count, "the script's length byte")
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        let bytes = header + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        guard await wire.connection.send(bytes) else { throw TestFailure("the gateway closed the connection") }
    }

    static func write(_ wire: KaazingWire, header: [UInt8], _ text: String) async throws {
        try await write(wire, header: header, Array(text.utf8))
    }

    /// The inner `101` (`read /HTTP\/1.1 101.+\r\n/`, `Connection: Upgrade`, `Sec-WebSocket-Accept`, `Upgrade:
    /// websocket`), then the empty frame and the balancer frame KAAZING Gateway sends after it.
    static func expectOpened(_ wire: KaazingWire) async throws -> KaazingHandshake.Response {
        let inner = try await wire.answer()
        #expect(inner.status == 101)
        #expect(inner.value(of: "Connection")?.lowercased() == "upgrade")
        #expect(inner.value(of: "Upgrade")?.lowercased() == "websocket")
        #expect(inner.value(of: "Sec-WebSocket-Accept") == accept)
        #expect(try await wire.frame() == balancer)
        return inner
    }

    /// The inner `401` with the realm's challenge: `Application Basic realm="Kaazing WebSocket Gateway Demo"`.
    static func expectChallenged(_ wire: KaazingWire) async throws {
        let inner = try await wire.answer()
        #expect(inner.status == 401)
        #expect(inner.reason == "Unauthorized")
        #expect(inner.value(of: "WWW-Authenticate") == "Application Basic realm=\"Kaazing WebSocket Gateway Demo\"")
        #expect(inner.value(of: "Content-Length") == String(inner.body.count))
    }

    @Test("opening/extended.handshake.protocol.negotiated") func extendedHandshakeProtocolNegotiated() async throws {
        _ = try await Self.open("/path")
    }

    @Test("extended/connection.established") func connectionEstablished() async throws {
        let (wire, _) = try await Self.open("/path")
        try await Self.write(wire, header: [0x82, 0x96], "GET /path HTTP/1.1\r\n\r\n")
        _ = try await Self.expectOpened(wire)
    }

    @Test("extended/extended.handshake.response.code.401") func extendedHandshakeResponseCode401() async throws {
        let (wire, _) = try await Self.open("/auth")
        try await Self.write(wire, header: [0x82, 0x96], "GET /auth HTTP/1.1\r\n\r\n")
        try await Self.expectChallenged(wire)
    }

    @Test("extended/connection.established.with.authorization") func connectionEstablishedWithAuthorization() async throws {
        let (wire, _) = try await Self.open("/auth")
        try await Self.write(wire, header: [0x82, 0x96], "GET /auth HTTP/1.1\r\n\r\n")
        try await Self.expectChallenged(wire)
        try await Self.write(wire, header: [0x82, 0xBD], "GET /auth HTTP/1.1\r\nAuthorization: Basic am9lOndlbGNvbWU=\r\n\r\n")
        _ = try await Self.expectOpened(wire)
    }

    @Test("extended/connection.established.data.exchanged.close") func connectionEstablishedDataExchangedClose() async throws {
        let (wire, _) = try await Self.open("/path")
        try await Self.write(wire, header: [0x82, 0x96], "GET /path HTTP/1.1\r\n\r\n")
        _ = try await Self.expectOpened(wire)
        try await Self.write(wire, header: [0x81, 0x83], "AAA")
        #expect(try await wire.frame() == .init(opcode: 0x1, payload: Array("AAA".utf8)))
        // The client's close without a code: the close that comes back is the upstream's (the echo answers 1000),
        // where the script reads KAAZING's empty one; then the connection ends.
        try await Self.write(wire, header: [0x88, 0x80], [])
        let close = try await wire.frame()
        #expect(close.opcode == 0x8)
        #expect(close.payload.isEmpty || close.payload.prefix(2) == [0x03, 0xE8])
        #expect(await wire.connection.readToEnd().closed)
    }

    /// The inner `101` announces the idle timeout of `/auth` (60 s in ``ScriptGateway``), as the script reads it:
    /// `Sec-WebSocket-Extensions: x-kaazing-idle-timeout; timeout=…`.
    @Test("extended/extension.in.extended.handshake") func extensionInExtendedHandshake() async throws {
        let (wire, _) = try await Self.open("/auth")
        try await Self.write(wire, header: [0x82, 0xC8], "GET /auth HTTP/1.1\r\nSec-WebSocket-Extensions: x-kaazing-idle-timeout\r\n\r\n")
        try await Self.expectChallenged(wire)
        try await Self.write(wire, header: [0x82, 0xEF],
                             "GET /auth HTTP/1.1\r\nAuthorization: Basic am9lOndlbGNvbWU=\r\nSec-WebSocket-Extensions: x-kaazing-idle-timeout\r\n\r\n")
        let inner = try await Self.expectOpened(wire)
        #expect(inner.value(of: "Sec-WebSocket-Extensions") == "x-kaazing-idle-timeout; timeout=60000")
    }

    /// Deliberately declined on the outer `101` (the script reads `x-kaazing-idle-timeout` back there, without its
    /// timeout): the outer WebSocket is the extended handshake's, and KAAZING's clients read the extensions of the
    /// inner `101`, where Gatehouse announces them (the request read over the upgrade's fields). The script's second frame
    /// header, `0x82 0xB9` (57 bytes), is four short of the request it writes (61, `0xBD` as in
    /// `connection.established.with.authorization`): the right length is written here.
    @Test("extended/extension.in.opening.handshake") func extensionInOpeningHandshake() async throws {
        let (wire, answer) = try await Self.open("/auth", extensions: "x-kaazing-idle-timeout")
        #expect(answer.header("Sec-WebSocket-Extensions") == nil)
        try await Self.write(wire, header: [0x82, 0x96], "GET /auth HTTP/1.1\r\n\r\n")
        try await Self.expectChallenged(wire)
        try await Self.write(wire, header: [0x82, 0xBD], "GET /auth HTTP/1.1\r\nAuthorization: Basic am9lOndlbGNvbWU=\r\n\r\n")
        _ = try await Self.expectOpened(wire)
    }

    /// A message that is not a request where the extended handshake's request belongs: an inner `400`. Where the
    /// script then reads its own close (1000) echoed, Gatehouse has already ended the refused handshake itself with
    /// 1008 (policy violation), as it does every refusal that ends one; KAAZING's clients report either as a close.
    @Test("extended/client.sends.message.between.opening.and.extended.handshake") func clientSendsMessageBetweenOpeningAndExtendedHandshake() async throws {
        let (wire, _) = try await Self.open("/path")
        try await Self.write(wire, header: [0x82, 0x85], "Hello")
        let inner = try await wire.answer()
        #expect(inner.status == 400)
        try await Self.write(wire, header: [0x88, 0x82], [0x03, 0xE8])
        var frames: [KaazingWire.Frame] = []
        while frames.last?.opcode != 0x8, frames.count < 4, let frame = try? await wire.frame() { frames.append(frame) }
        #expect(frames.last == .init(opcode: 0x8, payload: [0x03, 0xE8]) || frames.last == .init(opcode: 0x8, payload: [0x03, 0xF0]))
    }
}
