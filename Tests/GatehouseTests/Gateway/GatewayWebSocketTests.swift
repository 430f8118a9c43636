import Foundation
import Synchronization
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import GatehouseProtocol
import HummingbirdWSClient
import Logging
import NIOWebSocket
import Testing

/// WebSockets through the gateway: the upgrade is challenged, the relay echoes, expired credentials close it.
@Suite(.timeLimit(.minutes(3))) struct GatewayWebSocketTests {
    static func echoService(_ upstream: String, realm: String, roles: [String] = ["AUTHORIZED"]) -> ServiceConfiguration {
        ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: realm, requireRoles: roles, webSocket: true)
    }

    /// Sends `lines` and collects the echoes, then closes.
    static func echo(_ lines: [String]) -> GatewayWebSocketHandler {
        { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            for line in lines {
                try await outbound.write(.text(line))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo for \(line)") }
                #expect(echoed == line)
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
    }

    @Test func upgradeIsChallengedAndEchoWorks() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .applicationBasic, description: "Demo Realm")],
                                 services: [Self.echoService(upstream, realm: "demo")])
        }) { fixture async throws in
            let url = fixture.wsBase + "/echo"
            // No credentials: 401 on the upgrade with the realm's scheme, never plain Basic.
            let probe = try await GatewayWebSocketClient.probe(url: url)
            #expect(probe.status == 401)
            #expect(probe.challenge == "Application Basic realm=\"Demo Realm\"")
            #expect(try await GatewayWebSocketClient.probe(url: url, authorization: basicAuthorization("ann", "secret")).status == 403)
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(url: url, logger: GatewayFixture.logger) { _, _, _ in }
            }
            // Right credentials through the SDK's handler: the echo works.
            let login = CountingLoginHandler(repeating: .joe)
            let answers = try WebSocketChallengeAnswers(BasicChallengeHandler(loginHandler: login), url: url)
            try await GatewayWebSocketClient.connect(url: url, logger: GatewayFixture.logger, answer: answers.answer,
                                                     handler: Self.echo(["hello", "through the gateway"]))
            #expect(login.asked == 1)
            let before = fixture.gateway.statistics.counters(realm: "demo")

            // Two wrong tries: the client gives up with a clear error; the gateway saw exactly two tries.
            let wrong = CountingLoginHandler(repeating: .wrong)
            let wrongAnswers = try WebSocketChallengeAnswers(BasicChallengeHandler(loginHandler: wrong), url: url, maxAttempts: 2)
            await #expect(throws: GatewayClientError.retryLimitReached(location: URL(string: url)!, attempts: 2, challenge: "Application Basic realm=\"Demo Realm\"")) {
                try await GatewayWebSocketClient.connect(url: url, logger: GatewayFixture.logger, answer: wrongAnswers.answer, handler: Self.echo(["x"]))
            }
            #expect(wrong.asked == 2)
            let after = fixture.gateway.statistics.counters(realm: "demo")
            #expect(after.attempts - before.attempts == 2)
            #expect(after.failures - before.failures == 2)
        }
    }

    @Test func authorizationTimeoutClosesTheConnection() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .basic, authorizationTimeout: 0.5)],
                                 services: [Self.echoService(upstream, realm: "demo")])
        }) { fixture async throws in
            let url = fixture.wsBase + "/echo"
            let answers = try WebSocketChallengeAnswers(BasicChallengeHandler(loginHandler: CountingLoginHandler(.joe)), url: url)
            let start = ContinuousClock.now
            let close = try await GatewayWebSocketClient.connect(url: url, logger: GatewayFixture.logger, answer: answers.answer) { inbound, outbound in
                try await outbound.write(.text("ping"))
                for try await _ in inbound {}
            }
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "authorization timeout")
            #expect(ContinuousClock.now - start < .seconds(30))  // closed by the timeout, not left open
            #expect(fixture.gateway.statistics.counters(realm: "demo").expiredConnections == 1)
        }
    }

    @Test func aConnectionIsClosedWhenItsTokenExpires() async throws {
        try await TestServer.run { server async throws in
            try await GatewayFixture.run({ upstream in
                GatewayConfiguration(realms: [GatewayTokenTests.tokenRealm(server)], services: [Self.echoService(upstream, realm: "tokens", roles: ["accessRestricted"])])
            }) { fixture async throws in
                let url = fixture.wsBase + "/echo"
                #expect(try await GatewayWebSocketClient.probe(url: url).challenge == "Application Token")
                let brief = try await TokenTests.pinClient(server, app: "com.sample.brief", platform: "ios")
                let token = try await brief.obtainToken(scope: "accessRestricted").access_token
                let answers = try WebSocketChallengeAnswers(TokenChallengeHandler { _ in token }, url: url)
                let echoed = Mutex(0)
                let close = try await GatewayWebSocketClient.connect(url: url, logger: GatewayFixture.logger, answer: answers.answer) { inbound, outbound in
                    try await outbound.write(.text("first"))
                    for try await message in inbound {
                        if case .text("first") = message { echoed.withLock { $0 += 1 } }
                    }
                }
                #expect(echoed.withLock { $0 } == 1)
                #expect(close?.closeCode == .policyViolation)
                #expect(close?.reason == "credentials expired")
                // The expired token no longer opens the service.
                #expect(try await GatewayWebSocketClient.probe(url: url, authorization: "Token \(token)").status == 401)
            }
        }
    }

    @Test func theSDKsTokenHandlerRunsTheSecurityCheckAndOpensTheWebSocket() async throws {
        try await TestServer.run { server async throws in
            try await GatewayFixture.run({ upstream in
                GatewayConfiguration(realms: [GatewayTokenTests.tokenRealm(server)],
                                     services: [Self.echoService(upstream, realm: "tokens", roles: ["accessRestricted"])])
            }) { fixture async throws in
                let url = fixture.wsBase + "/echo"
                // The gateway asks for a token; the SDK obtains one for accessRestricted, which runs the PIN check.
                let challenges = Calls<JSONObject>()
                let client = SDK.client(server)
                try client.registerChallengeHandler(SDK.pinHandler(challenges))
                let handler = TokenChallengeHandler(client: client, scope: "accessRestricted")
                try await GatewayWebSocketClient.connect(url: url, challengeHandler: handler, logger: GatewayFixture.logger,
                                                         handler: Self.echo(["with a token from the SDK"]))
                #expect(challenges.count == 1)
                // A second connection reuses the cached token: no new challenge.
                try await GatewayWebSocketClient.connect(url: url, challengeHandler: handler, logger: GatewayFixture.logger,
                                                         handler: Self.echo(["again"]))
                #expect(challenges.count == 1)
            }
        }
    }

    @Test func aRealmThatRevalidatesAsksAgainInBandWithoutDroppingTheConnection() async throws {
        try await GatewayFixture.run({ upstream in
            var realm = GatewayFixture.usersRealm("demo", scheme: .basic, authorizationTimeout: 0.4)
            realm.revalidate = true
            realm.revalidationGrace = 1.5
            return GatewayConfiguration(realms: [realm], services: [Self.echoService(upstream, realm: "demo")])
        }) { fixture async throws in
            let url = fixture.wsBase + "/echo"
            // The handler answers the handshake and every in-band challenge; the echo goes on across them.
            let login = CountingLoginHandler(repeating: .joe)
            let close = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: login), logger: GatewayFixture.logger
            ) { messages, outbound in
                var iterator = messages.makeAsyncIterator()
                for line in ["before", "after a revalidation", "after another"] {
                    try await outbound.write(.text(line))
                    guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo for \(line)") }
                    #expect(echoed == line)  // never a revalidation frame
                    try await Task.sleep(for: .milliseconds(900))
                }
            }
            #expect(login.asked >= 3)  // the handshake and at least two in-band challenges
            #expect(close?.closeCode != .policyViolation)
            #expect(fixture.gateway.statistics.counters(realm: "demo").expiredConnections == 0)

            // Wrong credentials in band: closed with 1008, the upstream never saw the answer.
            let failing = CountingLoginHandler(.joe, .wrong)
            let closed = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: failing), logger: GatewayFixture.logger
            ) { messages, _ in
                for try await message in messages { Issue.record("unexpected message \(message)") }
            }
            #expect(closed?.closeCode == .policyViolation)
            #expect(closed?.reason == "revalidation failed")
            #expect(failing.asked == 2)

            // No answer in band (the login handler gives up): closed once the grace period is over.
            let silent = CountingLoginHandler(.joe)
            let unanswered = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: silent), logger: GatewayFixture.logger
            ) { messages, _ in
                for try await message in messages { Issue.record("unexpected message \(message)") }
            }
            #expect(unanswered?.closeCode == .policyViolation)
            #expect(unanswered?.reason == "revalidation not answered")
        }
    }
}
