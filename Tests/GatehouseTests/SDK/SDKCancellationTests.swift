import Foundation
import GatehouseClient
import GatehouseProtocol
import Synchronization
import Testing

/// A seed-style handler: shows the challenge, and cancels the first one a moment later; answers later ones.
final class CancellingPinHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let challenges = Calls<JSONObject>()

    override func handleChallenge(_ challenge: JSONObject) {
        challenges.record(challenge)
        let first = challenges.count == 1
        Task {
            try? await Task.sleep(for: .milliseconds(500))
            if first { cancel() } else { submitChallengeAnswer(["pin": "1234"]) }
        }
    }
}

/// A handler whose user never answers.
final class SilentHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let challenges = Calls<JSONObject>()
    override func handleChallenge(_ challenge: JSONObject) { challenges.record(challenge) }
}

/// Cancelled and unanswered challenges (invariant 4 of reference §4.6, pain point 1 of §5): every request
/// fails with a clear error, none hangs.
@Suite(.timeLimit(.minutes(3))) struct SDKCancellationTests {
    @Test func cancelFailsTheActiveAndEveryWaitingRequest() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let handler = CancellingPinHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)

            let errors = try await SDK.bounded(60) {
                await withTaskGroup(of: GatehouseClientError?.self) { group in
                    for index in 0..<20 {
                        group.addTask {
                            await SDK.error {
                                // Most know their scope; some must learn it; some want the check itself as scope.
                                switch index % 4 {
                                case 0: _ = try await ResourceRequest(client: client, path: SDK.balancePath).send()
                                case 1: _ = try await client.obtainAccessToken(forScope: "PinCodeAttempts")
                                default: _ = try await ResourceRequest(client: client, path: SDK.balancePath, scope: "accessRestricted").send()
                                }
                            }
                        }
                    }
                    return await group.reduce(into: [GatehouseClientError?]()) { $0.append($1) }
                }
            }
            #expect(errors.count == 20)
            #expect(errors.allSatisfy { $0 == .challengeCancelled(securityCheck: "PinCodeAttempts") })
            #expect(handler.challenges.count == 1, "the cancelled challenge is not put to the user again")
            #expect(!handler.isChallengeOpen)
            let resent = transport.requests(to: "/preauth/v1/preauthorize").filter { $0.bodyJSON?["challengeResponse"] != nil }
            #expect(resent.isEmpty, "a cancelled challenge is not answered")

            // A request that starts after the cancel is challenged afresh (and this time answered).
            let balance = try await SDK.bounded(60) { try await ResourceRequest(client: client, path: SDK.balancePath).send().text }
            #expect(balance == "19938.80")
            #expect(handler.challenges.count == 2)
        }
    }

    @Test func anUnansweredChallengeTimesOutForEveryRequest() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, challengeTimeout: .milliseconds(700))
            let handler = SilentHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            let errors = try await SDK.bounded(60) {
                await withTaskGroup(of: GatehouseClientError?.self) { group in
                    for _ in 0..<5 {
                        group.addTask { await SDK.error { _ = try await ResourceRequest(client: client, path: SDK.balancePath, scope: "accessRestricted").send() } }
                    }
                    group.addTask { await SDK.error { _ = try await client.obtainAccessToken(forScope: "PinCodeAttempts") } }
                    return await group.reduce(into: [GatehouseClientError?]()) { $0.append($1) }
                }
            }
            #expect(errors.allSatisfy { $0 == .challengeTimedOut(securityCheck: "PinCodeAttempts") })
            #expect(handler.challenges.count == 1)
            #expect(!handler.isChallengeOpen, "the handler's open challenge is closed")
        }
    }

    /// A closure responder that never returns is abandoned at the timeout too, and told.
    @Test func aResponderThatNeverReturnsIsAbandoned() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, challengeTimeout: .milliseconds(500))
            let abandoned = Calls<GatehouseClientError>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "SimpleCaptcha", onAbandoned: { abandoned.record($0) }) { _ in
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // never resumes
                return .cancel
            })
            let error = try await SDK.bounded(60) { await SDK.error { _ = try await client.obtainAccessToken(forScope: "SimpleCaptcha") } }
            #expect(error == .challengeTimedOut(securityCheck: "SimpleCaptcha"))
            #expect(abandoned.all == [.challengeTimedOut(securityCheck: "SimpleCaptcha")])
        }
    }

    /// In a multi-check challenge, cancelling one handler abandons the other's open challenge too.
    @Test func cancellingOneCheckOfAMultiCheckChallengeEndsTheRequest() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let captcha = SilentHandler(securityCheck: "SimpleCaptcha")
            try client.registerChallengeHandler(captcha)
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "PinCodeAttempts") { _ in
                try? await Task.sleep(for: .milliseconds(200))
                return .cancel
            })
            let error = try await SDK.bounded(60) { await SDK.error { _ = try await client.obtainAccessToken(forScope: "both") } }
            #expect(error == .challengeCancelled(securityCheck: "PinCodeAttempts"))
            #expect(captcha.challenges.count == 1)
            #expect(!captcha.isChallengeOpen)
        }
    }
}
