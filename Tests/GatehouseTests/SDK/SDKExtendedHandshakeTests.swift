import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import Synchronization
import Testing

/// The SDK's WebSocket client through KAAZING's extended handshake against a real gateway: challenges answered inside
/// the WebSocket, a refusal's status read, each answer counted once by the gateway (no probe, no `OPTIONS` check).
@Suite(.timeLimit(.minutes(3))) struct SDKExtendedHandshakeTests {
    static func configuration(_ upstream: String) -> GatewayConfiguration {
        GatewayConfiguration(
            realms: [GatewayFixture.usersRealm("demo", scheme: .applicationBasic, description: "Demo Realm")],
            services: [GatewayWebSocketTests.echoService(upstream, realm: "demo"),
                       ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/echo", webSocket: true)])
    }

    /// What a connection's handler saw.
    final class Received: Sendable {
        let texts = Mutex<[String]>([])
        let selected = Mutex<String?>(nil)
    }

    /// Sends `text` and records its echo and the selected protocol.
    static func echo(_ text: String, _ received: Received) -> @Sendable (AsyncThrowingStream<GatewayWebSocketMessage, any Error>, GatewayWebSocketWriter,
                                                                         GatewayWebSocketClient.Opened) async throws -> Void {
        { messages, outbound, opened in
            received.selected.withLock { $0 = opened.selectedProtocol }
            try await outbound.write(.text(text))
            for try await message in messages {
                if case .text(let echoed) = message {
                    received.texts.withLock { $0.append(echoed) }
                    return
                }
            }
        }
    }

    @Test func theRightPasswordOpensWithTheSelectedProtocolAndIsCountedOnce() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .joe)
            let received = Received()
            try await GatewayWebSocketClient.connectInBand(
                url: fixture.wsBase + "/echo", challengeHandler: BasicChallengeHandler(loginHandler: login), protocols: ["chat", "other"],
                logger: GatewayFixture.logger, handler: Self.echo("in band", received))
            #expect(received.texts.withLock { $0 } == ["in band"])
            #expect(received.selected.withLock { $0 } == "chat")
            #expect(login.asked == 1)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.attempts == 1)    // the answer, once: no OPTIONS check beside the handshake
            #expect(counters.challenges == 1)  // the first request, without credentials
        }
    }

    @Test func aWrongPasswordIsAskedAgainOnTheSameConnectionUntilTheLimit() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .wrong)
            let url = fixture.wsBase + "/echo"
            await #expect(throws: GatewayClientError.retryLimitReached(location: URL(string: url)!, attempts: 2, challenge: "Application Basic realm=\"Demo Realm\"")) {
                try await GatewayWebSocketClient.connectInBand(url: url, challengeHandler: BasicChallengeHandler(loginHandler: login),
                                                               logger: GatewayFixture.logger) { _, _, _ in }
            }
            #expect(login.asked == 2)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.attempts == 2)
            #expect(counters.failures == 2)
        }
    }

    @Test func aUserWithoutTheRoleIsRefusedWith403AtOnce() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .ann)
            await #expect(throws: GatewayClientError.refused(status: 403, challenge: nil)) {
                try await GatewayWebSocketClient.connectInBand(url: fixture.wsBase + "/echo", challengeHandler: BasicChallengeHandler(loginHandler: login),
                                                               logger: GatewayFixture.logger) { _, _, _ in }
            }
            #expect(login.asked == 1)
            #expect(fixture.gateway.statistics.counters(realm: "demo").forbidden == 1)
        }
    }

    @Test func anOpenServiceOpensWithoutAHandler() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let received = Received()
            try await GatewayWebSocketClient.connectInBand(url: fixture.wsBase + "/open", logger: GatewayFixture.logger, handler: Self.echo("open", received))
            #expect(received.texts.withLock { $0 } == ["open"])
            #expect(received.selected.withLock { $0 } == nil)
        }
    }

    @Test func aServerThatDoesNotStartTheHandshakeFailsInTime() async throws {
        // The echo upstream itself: it upgrades but knows nothing of KAAZING.
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let start = ContinuousClock.now
            await #expect(throws: GatewayClientError.self) {
                try await GatewayWebSocketClient.connectInBand(url: "ws://127.0.0.1:\(fixture.echo.port)/echo", handshakeTimeout: .milliseconds(500),
                                                               logger: GatewayFixture.logger) { _, _, _ in }
            }
            #expect(ContinuousClock.now - start < .seconds(30))  // not the test's time limit
        }
    }
}
