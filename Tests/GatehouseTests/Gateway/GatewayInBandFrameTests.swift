import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import HummingbirdWSClient
import NIOWebSocket
import Testing

/// The gateway's in-band frames (`GatewayRevalidation`) belong to the gateway: an upstream cannot send them to
/// phish the client's credentials, a client cannot send them to the upstream, the SDK answers them only on
/// connections it opened as revalidating, and a revalidation must keep the same user.
@Suite(.timeLimit(.minutes(3))) struct GatewayInBandFrameTests {
    static let bob = GatewayUser.hashing(username: "bob", password: "builder", roles: ["AUTHORIZED"], cost: 4)

    /// `/ws` behind a realm of joe and bob (both AUTHORIZED) that revalidates every `every` seconds; `/open` without
    /// a realm.
    static func configuration(_ upstream: String, every: Double = 0.4, grace: Double = 1.5) -> GatewayConfiguration {
        var realm = RealmConfiguration(name: "demo", scheme: .basic, authorizationTimeout: every, loginModules: [
            LoginModuleConfiguration(type: "users", flag: .required, users: [GatewayFixture.joe, bob]),
        ])
        realm.revalidate = true
        realm.revalidationGrace = grace
        return GatewayConfiguration(realms: [realm], services: [
            ServiceConfiguration(name: "ws", path: "/ws", upstream: upstream, realm: "demo", requireRoles: ["AUTHORIZED"], webSocket: true),
            ServiceConfiguration(name: "open", path: "/open", upstream: upstream, webSocket: true),
        ])
    }

    static func isReserved(_ message: WebSocketMessage) -> Bool {
        if case .text(let text) = message { return text.hasPrefix(GatewayRevalidation.reservedPrefix) }
        return false
    }

    @Test(.timeLimit(.minutes(1))) func anUpstreamCannotChallengeTheClientInBand() async throws {
        let capture = LogCapture()
        try await RecordingFixture.run(logger: capture.logger(), { Self.configuration($0, every: 30) }) { fixture async throws in
            // The upstream sends a challenge and an answer frame before "hello": the client sees "hello" first, and
            // its challenge handler is asked once (for the handshake), never by the upstream's frame.
            let login = CountingLoginHandler(repeating: .joe)
            try await GatewayWebSocketClient.connectRevalidating(
                url: fixture.wsBase + "/ws/phish", challengeHandler: BasicChallengeHandler(loginHandler: login), logger: GatewayFixture.logger
            ) { messages, outbound in
                var iterator = messages.makeAsyncIterator()
                guard case .text(let first) = try await iterator.next() else { throw TestFailure("no message") }
                #expect(first == "hello")
                try await outbound.write(.text("ping"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:ping")
            }
            #expect(login.asked == 1)
            // A plain connection to an open service: the reserved frames are dropped there too.
            try await WebSocketClient.connect(url: fixture.wsBase + "/open/phish", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first.map(Self.isReserved) == false)
                if case .text(let text) = first { #expect(text == "hello") }
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
        // Logged as a warning, without the frames' content.
        let log = capture.text
        // The phishing upstream sends two reserved frames per connection: the first is a warning, the next one debug.
        #expect(log.split(separator: "\n").filter { $0.hasPrefix("warning dropped an upstream frame with the gateway's reserved prefix") }.count == 2)
        #expect(log.contains("debug dropped an upstream frame with the gateway's reserved prefix dropped=2"))
        #expect(!log.contains("am9lOndlbGNvbWU="))
        #expect(!log.contains("gatehouse-challenge"))
    }

    @Test(.timeLimit(.minutes(1))) func aClientCannotSendTheGatewaysFramesToTheUpstream() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            try await WebSocketClient.connect(url: fixture.wsBase + "/open/echo", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text(let seen) = try await iterator.next(), seen.hasPrefix("seen:") else { throw TestFailure("no handshake description") }
                try await outbound.write(.text(GatewayRevalidation.answerPrefix + basicAuthorization("joe", "welcome")))
                try await outbound.write(.text(GatewayRevalidation.challengePrefix + "Basic realm=\"x\""))
                try await outbound.write(.text("after"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:after")  // the upstream never got the reserved frames
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRevalidationMustAuthenticateTheSameUser() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let url = fixture.wsBase + "/ws/echo"
            // joe at the handshake, bob in band: closed with 1008.
            let switching = CountingLoginHandler(.joe, PasswordCredentials(username: "bob", password: "builder"))
            let closed = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: switching), logger: GatewayFixture.logger
            ) { messages, _ in
                for try await message in messages { #expect(!Self.isReserved(message)) }
            }
            #expect(switching.asked == 2)
            #expect(closed?.closeCode == .policyViolation)
            #expect(closed?.reason == "revalidation changed the user")
            #expect(fixture.gateway.statistics.counters(realm: "demo").expiredConnections == 1)
            // joe both times: the connection lives on past several deadlines.
            let same = CountingLoginHandler(repeating: .joe)
            let kept = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: same), logger: GatewayFixture.logger
            ) { messages, outbound in
                var iterator = messages.makeAsyncIterator()
                _ = try await iterator.next()  // the upstream's handshake description
                try await Task.sleep(for: .milliseconds(1000))
                try await outbound.write(.text("still here"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:still here")
            }
            #expect(same.asked >= 2)
            #expect(kept?.closeCode != .policyViolation)
        }
    }

    @Test(.timeLimit(.minutes(1))) func onlyARevalidatingConnectionAnswersInBandChallenges() async throws {
        try await RecordingFixture.run({ Self.configuration($0, grace: 0.5) }) { fixture async throws in
            // connect (not connectRevalidating): the gateway's challenge arrives as data and is not answered.
            let login = CountingLoginHandler(repeating: .joe)
            let answers = try WebSocketChallengeAnswers(BasicChallengeHandler(loginHandler: login), url: fixture.wsBase + "/ws/echo")
            let received = Calls<String>()
            let close = try await GatewayWebSocketClient.connect(url: fixture.wsBase + "/ws/echo", logger: GatewayFixture.logger,
                                                                 answer: answers.answer) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case .text(let text) = message { received.record(text) }
                }
            }
            #expect(login.asked == 1)
            #expect(received.all.contains(GatewayRevalidation.challengePrefix + "Basic realm=\"demo\""))
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "revalidation not answered")
        }
    }

    @Test(.timeLimit(.minutes(1))) func theSDKNeverAnswersAChallengeItsHandshakeDidNotAsk() async throws {
        // Straight to a server that is not the gateway: no challenge on the handshake, then an in-band one.
        let upstream = try await RunningApp.start(logger: GatewayFixture.logger) { onRunning in
            RecordingUpstream.makeApplication(logger: GatewayFixture.logger, onServerRunning: onRunning)
        }
        let login = CountingLoginHandler(repeating: .joe)
        let received = Calls<String>()
        do {
            try await GatewayWebSocketClient.connectRevalidating(
                url: "ws://127.0.0.1:\(upstream.port)/phish", challengeHandler: BasicChallengeHandler(loginHandler: login),
                logger: GatewayFixture.logger
            ) { messages, outbound in
                for try await message in messages {
                    guard case .text(let text) = message else { continue }
                    received.record(text)
                    if text == "hello" { try await outbound.write(.text("ping")) }
                    if text == "got:ping" { break }
                }
            }
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
        #expect(login.asked == 0)
        #expect(!received.all.contains { $0.hasPrefix(GatewayRevalidation.challengePrefix) })
        #expect(!received.all.contains { $0.hasPrefix("got:" + GatewayRevalidation.answerPrefix) })  // never answered
        #expect(received.all.contains("got:ping"))
    }
}
