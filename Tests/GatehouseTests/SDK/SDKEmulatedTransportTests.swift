import Foundation
import GatehouseClient
import GatehouseClientWebSocket
import GatehouseGateway
import Synchronization
import Testing

/// The SDK's client for KAAZING's emulated WebSocket (`connectEmulated`) against a real gateway: the create challenged
/// and answered, the sub-protocol the upstream selected, messages both ways in order (text over 64 KiB, binary with
/// every byte value), the close; a wrong password asked again until the limit, a user without the role refused.
@Suite(.timeLimit(.minutes(3))) struct SDKEmulatedTransportTests {
    /// What a connection's handler saw.
    final class Received: Sendable {
        let messages = Mutex<[GatewayWebSocketMessage]>([])
        let selected = Mutex<String?>(nil)
    }

    @Test func theRightPasswordOpensAndEchoesEveryMessageInOrder() async throws {
        try await GatewayFixture.run({ SDKExtendedHandshakeTests.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .joe)
            let received = Received()
            let large = String(repeating: "0123456789abcdef", count: 6_000)  // 96,000 bytes: over 64 KiB
            let everyByte = GatewayWebSocketMessage.binary(bytes: (0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
            let sent: [GatewayWebSocketMessage] = [.text("hello"), everyByte, .text(large), .text("é ✓ 😀 \u{0} \r\n")]
            let close = try await GatewayWebSocketClient.connectEmulated(
                url: fixture.wsBase + "/echo", challengeHandler: BasicChallengeHandler(loginHandler: login), protocols: ["chat", "other"],
                logger: GatewayFixture.logger
            ) { messages, outbound, opened in
                received.selected.withLock { $0 = opened.selectedProtocol }
                for message in sent { try await outbound.write(message) }
                for try await message in messages {
                    let count = received.messages.withLock { $0.append(message); return $0.count }
                    if count == sent.count { return }
                }
            }
            #expect(received.messages.withLock { $0 } == sent)
            #expect(received.selected.withLock { $0 } == "chat")
            #expect(close?.code == 1000, "the gateway answered the close")
            #expect(login.asked == 1)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.attempts == 1)
            #expect(counters.challenges == 1)
        }
    }

    @Test func aWrongPasswordIsAskedAgainUntilTheLimit() async throws {
        try await GatewayFixture.run({ SDKExtendedHandshakeTests.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .wrong)
            let url = fixture.wsBase + "/echo"
            await #expect(throws: GatewayClientError.retryLimitReached(location: URL(string: url)!, attempts: 2, challenge: "Application Basic realm=\"Demo Realm\"")) {
                try await GatewayWebSocketClient.connectEmulated(url: url, challengeHandler: BasicChallengeHandler(loginHandler: login),
                                                                 logger: GatewayFixture.logger) { _, _, _ in }
            }
            #expect(login.asked == 2)
            #expect(fixture.gateway.statistics.counters(realm: "demo").failures == 2)
        }
    }

    @Test func aUserWithoutTheRoleIsRefusedAndNoChallengeHandlerMeansTheChallengeIsTheAnswer() async throws {
        try await GatewayFixture.run({ SDKExtendedHandshakeTests.configuration($0) }) { fixture in
            let login = CountingLoginHandler(repeating: .ann)
            await #expect(throws: GatewayClientError.refused(status: 403, challenge: nil)) {
                try await GatewayWebSocketClient.connectEmulated(url: fixture.wsBase + "/echo", challengeHandler: BasicChallengeHandler(loginHandler: login),
                                                                 logger: GatewayFixture.logger) { _, _, _ in }
            }
            #expect(login.asked == 1)
            await #expect(throws: GatewayClientError.refused(status: 401, challenge: "Application Basic realm=\"Demo Realm\"")) {
                try await GatewayWebSocketClient.connectEmulated(url: fixture.wsBase + "/echo", logger: GatewayFixture.logger) { _, _, _ in }
            }
        }
    }

    @Test func aServiceWithoutARealmOpensAndAMessageAfterTheCloseIsRefused() async throws {
        try await GatewayFixture.run({ SDKExtendedHandshakeTests.configuration($0) }) { fixture in
            let kept = Mutex<GatewayWebSocketWriter?>(nil)
            let close = try await GatewayWebSocketClient.connectEmulated(url: fixture.wsBase + "/open", logger: GatewayFixture.logger) { messages, outbound, _ in
                kept.withLock { $0 = outbound }
                try await outbound.write(.text("open"))
                for try await message in messages where message == .text("open") { return }
            }
            #expect(close?.code == 1000)
            let writer = try #require(kept.withLock { $0 })
            await #expect(throws: GatewayClientError.self) { try await writer.write(.text("after the close")) }
        }
    }
}
