import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Testing

/// The SDK's WebSocket client against servers we did not write (Hummingbird's WebSocket server, behind the real
/// gateway and alone): a message in fragments with a ping between them, the ping answered with its data (Hummingbird
/// closes a connection whose pong is missing or wrong with 1001), a message over the limit, wss with trust roots.
@Suite(.timeLimit(.minutes(2))) struct GatewayWebSocketEdgeTests {
    /// `/edge`: sends "Hello, wörld" in three frames with a ping after the first, pings every second, then echoes.
    static func edgeUpstream() async throws -> RunningApp {
        let logger = GatewayFixture.logger
        return try await RunningApp.start(logger: logger) { onRunning in
            let router = Router(context: BasicWebSocketRequestContext.self)
            router.ws("/edge") { inbound, outbound, _ in
                try await outbound.write(.custom(WebSocketFrame(fin: false, opcode: .text, data: ByteBuffer(string: "Hel"))))
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "between"))))
                try await outbound.write(.custom(WebSocketFrame(fin: false, opcode: .continuation, data: ByteBuffer(string: "lo, "))))
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(string: "wörld"))))
                for try await message in inbound.messages(maxSize: 1 << 22) {
                    switch message {
                    case .text(let text): try await outbound.write(.text(text))
                    case .binary(let bytes): try await outbound.write(.binary(bytes))
                    }
                }
            }
            return Application(
                router: Router(), server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(
                    maxFrameSize: 1 << 22, autoPing: .enabled(timePeriod: .seconds(1)))),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: logger)
        }
    }

    /// Reads the fragmented greeting, stays past several of the server's pings, then echoes a large binary message.
    static let exercise: GatewayWebSocketHandler = { messages, outbound in
        var iterator = messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("Hello, wörld"))
        try await Task.sleep(for: .milliseconds(3300))  // three pings: each pong must carry its ping's data
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0) }
        try await outbound.write(.binary(bytes: large))
        #expect(try await iterator.next()?.binaryBytes == large)
        try await outbound.write(.text("still here"))
        #expect(try await iterator.next() == .text("still here"))
    }

    @Test func fragmentsAndPingsThroughTheGatewayAndDirect() async throws {
        let upstream = try await Self.edgeUpstream()
        do {
            try await GatewayFixture.run({ _ in
                GatewayConfiguration(realms: [], services: [
                    ServiceConfiguration(name: "edge", path: "/edge", upstream: "http://127.0.0.1:\(upstream.port)/edge", webSocket: true),
                ])
            }) { fixture in
                let close = try await GatewayWebSocketClient.connect(url: fixture.wsBase + "/edge", handler: Self.exercise)
                #expect(close?.closeCode == .normalClosure)  // not 1001: every ping was answered
            }
            let direct = try await GatewayWebSocketClient.connect(url: "ws://127.0.0.1:\(upstream.port)/edge", handler: Self.exercise)
            #expect(direct?.closeCode == .normalClosure)
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
    }

    @Test func aMessageOverTheLimitClosesWith1009AndFailsTheReader() async throws {
        let upstream = try await Self.edgeUpstream()
        do {
            var configuration = GatewayWebSocketConfiguration()
            configuration.maxMessageSize = 1000
            await #expect(throws: (any Error).self) {
                try await GatewayWebSocketClient.connect(url: "ws://127.0.0.1:\(upstream.port)/edge", configuration: configuration) { messages, outbound in
                    var iterator = messages.makeAsyncIterator()
                    _ = try await iterator.next()
                    try await outbound.write(.binary(bytes: [UInt8](repeating: 7, count: 5000)))
                    while try await iterator.next() != nil {}
                }
            }
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
    }

    @Test func refusalsAreReadFromTheUpgradeAndTimeoutsHold() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .basic, description: "Demo Realm")],
                                 services: [GatewayWebSocketTests.echoService(upstream, realm: "demo")])
        }) { fixture in
            // The refusal's status, challenge and JSON body, from the upgrade's own answer.
            guard case .refused(let refusal) = try await GatewayWebSocketClient.open(url: fixture.wsBase + "/echo") else {
                Issue.record("upgraded without credentials")
                return
            }
            #expect(refusal.status == 401)
            #expect(refusal.challenge == "Basic realm=\"Demo Realm\"")
            #expect(String(decoding: refusal.body, as: UTF8.self).contains("unauthorized"))
            // The OPTIONS admission check, as a one-shot HTTP/1 request. Its answer waits on a bcrypt check: allowed
            // 30 s, not the default 10, since a loaded parallel shard (the CI of stop 59) once took longer.
            let patient = GatewayWebSocketConfiguration(handshakeTimeout: .seconds(30))
            let check = try await GatewayWebSocketClient.check(
                url: fixture.wsBase + "/echo", authorization: basicAuthorization("joe", "welcome"), configuration: patient)
            #expect(check.status == 200 && check.admitted)
            let wrong = try await GatewayWebSocketClient.check(
                url: fixture.wsBase + "/echo", authorization: basicAuthorization("joe", "nope"), configuration: patient)
            #expect(wrong.status == 401 && !wrong.admitted && wrong.challenge == "Basic realm=\"Demo Realm\"")
        }
        // A server that accepts the connection and never answers: the handshake timeout ends it.
        let silent = try ServerSocketStandIn()
        defer { silent.close() }
        var configuration = GatewayWebSocketConfiguration()
        configuration.handshakeTimeout = .milliseconds(300)
        let start = ContinuousClock.now
        await #expect(throws: GatewayClientError.self) {
            _ = try await GatewayWebSocketClient.open(url: "ws://127.0.0.1:\(silent.port)/", configuration: configuration)
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}

/// A listening socket that accepts nothing and answers nothing (the kernel completes the TCP handshake).
final class ServerSocketStandIn: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 4) == 0 else { throw TestFailure("bind/listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #endif
    }
}
