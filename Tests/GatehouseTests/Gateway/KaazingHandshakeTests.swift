import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// KAAZING's extended handshake on the wire, byte for byte as KAAZING's clients send it (the JavaScript client's
/// `WebSocketNativeHandshakeHandler`, the gateway's robot scripts), against a real gateway and a recording upstream.
@Suite(.timeLimit(.minutes(3))) struct KaazingHandshakeTests {
    static func service(_ upstream: String, realm: String? = nil, roles: [String]? = nil) -> ServiceConfiguration {
        ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: realm, requireRoles: roles, webSocket: true)
    }

    static func configuration(_ upstream: String, scheme: ChallengeScheme?) -> GatewayConfiguration {
        guard let scheme else { return GatewayConfiguration(services: [service(upstream)]) }
        return GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: scheme, description: "Demo Realm")],
                                    services: [service(upstream, realm: "demo", roles: ["AUTHORIZED"])])
    }

    @Test func anOpenServiceOpensThroughTheExtendedHandshake() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            let wire = try await KaazingWire.open(port: fixture.port, protocols: "x-kaazing-handshake, chat")
            try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [
                ("WebSocket-Protocol", ""), ("Sec-WebSocket-Protocol", "chat"),
                ("Sec-WebSocket-Extensions", "x-kaazing-idle-timeout,x-kaazing-ping-pong"),
            ]))
            let opening = try await wire.answer()
            #expect(opening.status == 101)
            #expect(opening.reason == "Web Socket Protocol Handshake")
            #expect(opening.value(of: "Sec-WebSocket-Protocol") == "chat")  // the one the upstream selected
            #expect(opening.value(of: "Sec-WebSocket-Accept") == WebSocketAccept.value(forKey: KaazingWire.key))
            // KAAZING's ping-pong granted; its idle timeout declined (the service has no inactivity timeout).
            #expect(opening.fields.filter { $0.name == "Sec-WebSocket-Extensions" }.map(\.value) == ["x-kaazing-ping-pong; 01010102"])
            #expect(try await wire.frame() == .init(opcode: 0x2, payload: KaazingHandshake.noRedirect))
            // The upstream got the application's protocol, no `.kl`, and no credentials.
            let seen = try await wire.seen()
            #expect(seen.target == "/echo")
            #expect(seen.header("sec-websocket-protocol") == "chat")
            try await wire.sendText("hello")
            #expect(try await wire.frame() == .init(opcode: 0x1, payload: Array("got:hello".utf8)))
        }
    }

    @Test(arguments: [ChallengeScheme.basic, .applicationBasic])
    func aRealmChallengesInsideTheWebSocketAndAdmitsOnTheSameSocket(scheme: ChallengeScheme) async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: scheme) }) { fixture in
            let challenge = scheme.challenge(realmDescription: "Demo Realm")
            let wire = try await KaazingWire.open(port: fixture.port)
            // The browser's first request has no credentials: 401 with the realm's challenge, inside the WebSocket.
            try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [("WebSocket-Protocol", ""), ("Sec-WebSocket-Protocol", "")]))
            let first = try await wire.answer()
            #expect(first.status == 401)
            #expect(first.value(of: "WWW-Authenticate") == challenge)
            // A wrong password: challenged again, same socket.
            try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [("Authorization", basicAuthorization("joe", "nope"))]))
            #expect(try await wire.answer().status == 401)
            // The right one: the inner 101, then the balancer frame again, then the upstream's.
            try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [("Authorization", basicAuthorization("joe", "welcome"))]))
            #expect(try await wire.answer().status == 101)
            #expect(try await wire.frame() == .init(opcode: 0x2, payload: KaazingHandshake.noRedirect))
            let seen = try await wire.seen()
            #expect(seen.header(GatewayRequestPolicy.userHeader) == "joe")
            #expect(seen.header("authorization") == nil)
            #expect(seen.header("sec-websocket-protocol") == nil)
            // Counted as any request of the realm is: two 401s, two attempts with credentials, one failure.
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.challenges == 2)
            #expect(counters.attempts == 2)
            #expect(counters.failures == 1)
            #expect(counters.successes == 1)
        }
    }

    @Test func aUserWithoutTheRoleIsRefusedInsideTheWebSocketAndClosed() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: .applicationBasic) }) { fixture in
            let wire = try await KaazingWire.open(port: fixture.port)
            try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [("Authorization", basicAuthorization("ann", "secret"))]))
            let refusal = try await wire.answer()
            #expect(refusal.status == 403)
            #expect(String(decoding: refusal.body, as: UTF8.self).contains("\"error\":\"forbidden\""))
            let close = try await wire.frame()
            #expect(close.opcode == 0x8)
            #expect(close.payload.prefix(2) == [0x03, 0xF0])  // 1008
            #expect(await wire.connection.readToEnd().closed)
        }
    }

    @Test func afterTheAttemptLimitTheConnectionIsRefusedAndClosed() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: .basic) }) { fixture in
            let wire = try await KaazingWire.open(port: fixture.port)
            let wrong = KaazingHandshake.Request(target: "/echo", fields: [("Authorization", basicAuthorization("joe", "nope"))])
            for _ in 1..<KaazingHandshakeStateMachine.defaultMaximumAttempts {
                try await wire.send(wrong)
                #expect(try await wire.answer().status == 401)
            }
            try await wire.send(wrong)
            let last = try await wire.answer()
            #expect(last.status == 403)
            #expect(String(decoding: last.body, as: UTF8.self).contains("too many attempts"))
            #expect(try await wire.frame().opcode == 0x8)
        }
    }

    @Test func aRequestForAnotherPathIsRefused() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            let wire = try await KaazingWire.open(port: fixture.port)
            try await wire.send(KaazingHandshake.Request(target: "/elsewhere"))
            #expect(try await wire.answer().status == 400)
            #expect(try await wire.frame().opcode == 0x8)
        }
    }

    @Test func anApplicationTokenServiceTakesAGatehouseTokenInsideTheWebSocket() async throws {
        try await TestServer.run { server async throws in
            try await RecordingFixture.run({ upstream in
                GatewayConfiguration(realms: [GatewayTokenTests.tokenRealm(server)], services: [Self.service(upstream, realm: "tokens", roles: ["accessRestricted"])])
            }) { fixture in
                let wire = try await KaazingWire.open(port: fixture.port)
                try await wire.send(KaazingHandshake.Request(target: "/echo"))
                let challenge = try await wire.answer()
                #expect(challenge.status == 401)
                #expect(challenge.value(of: "WWW-Authenticate") == "Application Token")
                let client = try await TokenTests.pinClient(server)
                let token = try await client.obtainToken(scope: "accessRestricted").access_token
                try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [("Authorization", "Token \(token)")]))
                #expect(try await wire.answer().status == 101)
                #expect(try await wire.frame().payload == KaazingHandshake.noRedirect)
                #expect(try await wire.seen().header("authorization") == nil)
            }
        }
    }

    @Test func aPlainUpgradeIsUnchanged() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: .basic) }) { fixture in
            let connection = try RawHTTPConnection(port: fixture.port)
            await connection.send(KaazingWire.upgrade(protocols: nil))
            let answer = await connection.readResponse()
            #expect(answer?.status == 401)
            #expect(answer?.header("WWW-Authenticate") == "Basic realm=\"Demo Realm\"")
        }
    }
}

/// A KAAZING client's side of the wire over a raw socket: the upgrade, masked frames out, frames in.
struct KaazingWire {
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    static let key = "RyAwnUWmFTgLpTnuEmj0kg=="
    let connection: RawHTTPConnection

    static func upgrade(path: String = "/echo", protocols: String?) -> String {
        "GET \(path)?.kl=Y HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nOrigin: http://127.0.0.1\r\n"
            + (protocols.map { "Sec-WebSocket-Protocol: \($0)\r\n" } ?? "")
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    /// Upgrades asking for `x-kaazing-handshake`: the outer `101` must select it and the balancer frame follow.
    static func open(port: Int, path: String = "/echo", protocols: String = KaazingHandshake.protocolName) async throws -> KaazingWire {
        let connection = try RawHTTPConnection(port: port)
        await connection.send(upgrade(path: path, protocols: protocols))
        guard let answer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        #expect(answer.status == 101)
        #expect(answer.header("Sec-WebSocket-Protocol") == KaazingHandshake.protocolName)
        #expect(answer.header("Sec-WebSocket-Accept") == WebSocketAccept.value(forKey: key))
        let wire = KaazingWire(connection: connection)
        let balancer = try await wire.frame()
        #expect(balancer == Frame(opcode: 0x2, payload: KaazingHandshake.noRedirect))
        return wire
    }

    /// Sends a masked frame.
    func send(opcode: UInt8, _ payload: [UInt8]) async throws {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        guard await connection.send(bytes) else { throw TestFailure("the gateway closed the connection") }
    }

    /// The request inside the handshake, in a text frame as the JavaScript client sends it.
    func send(_ request: KaazingHandshake.Request) async throws { try await send(opcode: 0x1, request.encoded) }

    func sendText(_ text: String) async throws { try await send(opcode: 0x1, Array(text.utf8)) }

    func frame() async throws -> Frame {
        guard let head = await connection.readBytes(count: 2) else { throw TestFailure("the connection ended before a frame") }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let extended = await connection.readBytes(count: 2) else { throw TestFailure("a frame cut short") }
            length = Int(extended[0]) << 8 | Int(extended[1])
        }
        #expect(head[1] & 0x80 == 0, "a frame from the gateway must not be masked")
        #expect(head[0] & 0x80 != 0, "a handshake frame is whole")
        let payload = length == 0 ? [] : await connection.readBytes(count: length)
        guard let payload else { throw TestFailure("a frame cut short") }
        return Frame(opcode: head[0] & 0x0F, payload: payload)
    }

    /// An answer inside the handshake: a binary frame with the response, then the empty binary frame ending it.
    func answer() async throws -> KaazingHandshake.Response {
        let frame = try await frame()
        #expect(frame.opcode == 0x2)
        let response = try KaazingHandshake.Response(parsing: frame.payload)
        #expect(try await self.frame() == Frame(opcode: 0x2, payload: []))
        return response
    }

    /// The recording upstream's first message: what its handshake got.
    func seen() async throws -> RecordingUpstream.Seen {
        let frame = try await frame()
        let text = String(decoding: frame.payload, as: UTF8.self)
        guard frame.opcode == 0x1, text.hasPrefix("seen:") else { throw TestFailure("not the upstream's description: \(text)") }
        return try RecordingUpstream.seen(Array(text.dropFirst(5).utf8))
    }
}
