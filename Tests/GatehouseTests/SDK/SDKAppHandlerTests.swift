import Foundation
import GatehouseClient
import GatehouseProtocol
import Synchronization
import Testing

/// A handler that never answers and records what the framework tells it.
final class ForgetfulHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let challenges = Calls<JSONObject>()
    let abandoned = Calls<GatehouseClientError>()
    override func handleChallenge(_ challenge: JSONObject) { challenges.record(challenge) }
    override func challengeAbandoned(_ reason: GatehouseClientError) { abandoned.record(reason) }
}

/// Answers with a number first (a wrong PIN), then with a string.
final class TypedAnswerHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let challenges = Calls<JSONObject>()
    override func handleChallenge(_ challenge: JSONObject) {
        challenges.record(challenge)
        if challenges.count == 1 {
            submitChallengeAnswer(["pin": 4321] as [String: Int])
        } else {
            submitChallengeAnswer(["pin": "1234"] as [String: String])
        }
    }
}

/// A UI-side responder: every hook must arrive on the main actor.
@MainActor final class PinScreen: MainActorChallengeResponder {
    var log: [String] = []

    func handleChallenge(_ challenge: JSONObject, from handler: MainActorChallengeHandler) {
        MainActor.assertIsolated()
        log.append("challenge \(challenge["remainingAttempts"]?.intValue ?? -1)")
        handler.submitChallengeAnswer(["pin": "1234"])
    }

    func handleSuccess(_ success: JSONObject, from handler: MainActorChallengeHandler) {
        MainActor.assertIsolated()
        log.append("success")
    }
}

/// The SDK as UI code uses it: abandoned challenges, late answers, typed answers, main-actor hooks, the observable
/// model, the event stream and the token refresh margin.
@Suite(.timeLimit(.minutes(3))) struct SDKAppHandlerTests {
    @Test func aTimedOutChallengeIsReportedAndALateAnswerIsNotLost() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, challengeTimeout: .milliseconds(500))
            let handler = ForgetfulHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            let events = client.events()
            let error = try await SDK.bounded(30) { await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") } }
            #expect(error == .challengeTimedOut(securityCheck: "PinCodeAttempts"))
            try await SDKCallerCancellationTests.waitUntil("the handler hears of the abandonment") { handler.abandoned.count == 1 }
            #expect(handler.abandoned.all == [.challengeTimedOut(securityCheck: "PinCodeAttempts")])
            // The user answers after the timeout: the answer is refused and reported, not silently dropped.
            #expect(handler.submitChallengeAnswer(["pin": "1234"]) == false)
            #expect(handler.cancel() == false)
            let late = try await SDK.bounded(10) { () async -> GatehouseEvent? in
                for await event in events where event.kind == .lateAnswer { return event }
                return nil
            }
            #expect(late?.securityCheck == "PinCodeAttempts")
        }
    }

    @Test func plainDictionariesAreSentAsTheirJSON() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let handler = TypedAnswerHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            _ = try await SDK.bounded(30) { try await client.obtainAccessToken(forScope: "accessRestricted") }
            let answers = transport.requests(to: "/preauth/v1/preauthorize").compactMap { $0.bodyJSON?["challengeResponse"]?["PinCodeAttempts"] }
            #expect(answers == [["pin": 4321], ["pin": "1234"]])
            #expect(handler.challenges.count == 2, "the first was a wrong PIN, the second the right one")
        }
    }

    @Test func mainActorHooksRunOnTheMainActorInOrder() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let screen = await PinScreen()
            try client.registerChallengeHandler(MainActorChallengeHandler(securityCheck: "PinCodeAttempts", responder: screen))
            let token = try await SDK.bounded(30) { try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(token.scope == "RegisteredClient accessRestricted")
            let deadline = ContinuousClock.now + .seconds(10)
            while await screen.log.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(await screen.log == ["challenge 3", "success"])
        }
    }

    @Test func theEventStreamTellsTheWholeFlow() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            let events = client.events()
            _ = try await SDK.bounded(30) { try await client.obtainAccessToken(forScope: "accessRestricted") }
            let kinds = try await SDK.bounded(10) {
                var kinds: [GatehouseEvent.Kind] = []
                for await event in events {
                    kinds.append(event.kind)
                    if event.kind == .tokenObtained { break }
                }
                return kinds
            }
            #expect(kinds == [.registered, .challengeReceived, .challengeAnswered, .securityCheckSucceeded, .tokenObtained])
        }
    }

    @Test func aTokenIsReplacedAMarginBeforeItsExpiry() async throws {
        try await TestServer.run { server in
            // The server's tokens last 6 s here; the margin (60 s by default) is capped at half that.
            let transport = RecordingTransport(rewrite: { request, response in
                guard request.url.path.hasSuffix("/az/v1/token"), response.status == 200,
                      var token = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else { return response }
                token.expires_in = 6
                return TransportResponse(status: 200, headers: response.headers, body: (try? JSONEncoder().encode(token)) ?? response.body)
            })
            let client = SDK.client(server, transport: transport)
            let first = try await client.obtainAccessToken()
            #expect(try await client.obtainAccessToken() == first, "well before the margin, the cached token")
            try await Task.sleep(for: .milliseconds(3200))
            #expect(!first.isExpired)
            #expect(await client.authorizationManager.cachedAccessToken() == nil, "within the margin, no longer offered")
            let second = try await client.obtainAccessToken()
            #expect(second != first)
            #expect(transport.requests(to: "/az/v1/token").count == 2)
        }
    }

    @Test func theRefreshMarginIsAtMostHalfTheLifetime() {
        let issued = Date(timeIntervalSince1970: 1_000)
        let long = AccessToken(value: "t", scope: "a", expiresAt: issued.addingTimeInterval(3600), issuedAt: issued)
        #expect(!long.needsRefresh(margin: .seconds(60), at: issued.addingTimeInterval(3539)))
        #expect(long.needsRefresh(margin: .seconds(60), at: issued.addingTimeInterval(3541)))
        let short = AccessToken(value: "t", scope: "a", expiresAt: issued.addingTimeInterval(10), issuedAt: issued)
        #expect(!short.needsRefresh(margin: .seconds(60), at: issued.addingTimeInterval(4.9)))
        #expect(short.needsRefresh(margin: .seconds(60), at: issued.addingTimeInterval(5.1)))
        #expect(!short.needsRefresh(margin: .zero, at: issued.addingTimeInterval(9.9)))
    }

    /// `TokenChallengeHandler(client:scope:)` keeps why it could not have a token.
    @Test func theTokenHandlerKeepsWhyTheTokenFailed() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "PinCodeAttempts") { _ in .cancel })
            let handler = TokenChallengeHandler(client: client, scope: "accessRestricted")
            let location = URL(string: "http://gateway.invalid/api")!
            var state = GatewayChallengeLoop.State()
            do throws(GatewayClientError) {
                _ = try await GatewayChallengeLoop(challengeHandler: handler).answer("Application Token", location: location, state: &state)
                Issue.record("expected the loop to give up")
            } catch {
                #expect(error.code == .cancelled)
                #expect(error.underlying as? GatehouseClientError == .challengeCancelled(securityCheck: "PinCodeAttempts"))
            }
        }
    }

    @Test func theStreamsEndWhenTheClientGoesAway() async throws {
        var client: GatehouseClient? = GatehouseClient(
            configuration: ClientConfiguration(serverURL: URL(string: "http://127.0.0.1:1")!, applicationID: "a", logger: SDK.quietLogger),
            keyStore: InMemoryKeyStore())
        let events = try #require(client).events()
        let reader = Task { () async -> Int in
            var count = 0
            for await _ in events { count += 1 }
            return count
        }
        client = nil
        #expect(try await SDK.bounded(10) { await reader.value } == 0)
    }

    /// The configuration's logger hears the flow, never its secrets; a late answer is a warning.
    @Test func theLoggerHearsTheFlowButNoSecrets() async throws {
        try await TestServer.run { server in
            let capture = LogCapture()
            let client = SDK.client(server, challengeTimeout: .milliseconds(500), logger: capture.logger())
            let handler = ForgetfulHandler(securityCheck: "SimpleCaptcha")
            try client.registerChallengeHandler(SDK.pinHandler(Calls(), pin: "1234"))
            try client.registerChallengeHandler(handler)
            let token = try await SDK.bounded(30) { try await client.obtainAccessToken(forScope: "accessRestricted") }
            _ = await SDK.error { _ = try await client.obtainAccessToken(forScope: "SimpleCaptcha") }
            handler.submitChallengeAnswer(["answer": "7"])
            let log = capture.text
            #expect(log.contains("debug registered"))
            #expect(log.contains("debug challengeReceived check=PinCodeAttempts"))
            #expect(log.contains("debug tokenObtained scope=\"RegisteredClient accessRestricted\""))
            #expect(log.contains("notice challengeAbandoned check=SimpleCaptcha error=challengeTimedOut"))
            #expect(log.contains("warning lateAnswer check=SimpleCaptcha"))
            // The PIN as a value of its own (a client id or a time may hold the digits 1234 by chance).
            let pin = try NSRegularExpression(pattern: "(?<![0-9A-Za-z])1234(?![0-9A-Za-z])")
            #expect(pin.firstMatch(in: log, range: NSRange(log.startIndex..., in: log)) == nil && !log.contains(token.value), "no PIN, no token")
        }
    }
}
