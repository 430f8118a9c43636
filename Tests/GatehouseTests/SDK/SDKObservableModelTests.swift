#if canImport(Observation)
import Foundation
import GatehouseClient
import Observation
import Testing

/// The observable pending-challenge model a SwiftUI PIN prompt is driven by.
/// Runs in the timing pass of `scripts/test` (one test at a time): a first registration generates an RSA key, and
/// on two busy cores that alone has taken longer than a bound meant for the model.
@Suite(.timeLimit(.minutes(3))) struct SDKObservableModelTests {
    /// Waits until `condition` holds on the main actor (30 s at most).
    static func waitOnMain(_ condition: @escaping @MainActor () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("the model never got there") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func thePromptAppearsIsAnsweredAndGoesAway() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let model = PendingChallengeModel()
            try await MainActor.run { try model.register(securityChecks: ["PinCodeAttempts"], with: client) }
            let changed = Calls<Bool>()
            await MainActor.run {
                withObservationTracking { _ = model.current } onChange: { changed.record(true) }
            }
            let request = Task { try await ResourceRequest(client: client, path: SDK.balancePath, scope: "accessRestricted").send().text }
            try await Self.waitOnMain { model.current != nil }
            #expect(changed.count == 1, "SwiftUI hears that a prompt is due")
            let pending = try #require(await model.current)
            #expect(pending.securityCheck == "PinCodeAttempts")
            #expect(pending.remainingAttempts == 3)

            // A wrong PIN: the prompt comes back with one attempt less and the check's message.
            #expect(await model.submit(["pin": "0000"]))
            try await Self.waitOnMain { model.current?.remainingAttempts == 2 }
            #expect(await model.current?.id != pending.id)
            #expect(await model.submit(["pin": "1234"]))
            #expect(try await SDK.bounded(30) { try await request.value } == "19938.80")
            try await Self.waitOnMain { model.pending.isEmpty }
        }
    }

    /// A round that challenges two checks shows both prompts, one after the other.
    @Test func twoChecksOfOneRoundQueueUp() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let model = PendingChallengeModel()
            try await MainActor.run { try model.register(securityChecks: ["PinCodeAttempts", "SimpleCaptcha"], with: client) }
            let request = Task { try await client.obtainAccessToken(forScope: "both") }
            try await Self.waitOnMain { model.pending.count == 2 }
            #expect(Set(await model.pending.map(\.securityCheck)) == ["PinCodeAttempts", "SimpleCaptcha"])
            for _ in 0..<2 {
                let current = try #require(await model.current)
                let answer: JSONObject = current.securityCheck == "SimpleCaptcha" ? SDK.captchaAnswer(current.challenge) : ["pin": "1234"]
                #expect(await model.submit(answer))
            }
            let token = try await SDK.bounded(30) { try await request.value }
            #expect(token.scope.contains("RegisteredClient"))
            try await Self.waitOnMain { model.pending.isEmpty }
        }
    }

    @Test func theModelForgetsAChallengeItsCallerAbandoned() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let model = PendingChallengeModel()
            try await MainActor.run { try model.register(securityChecks: ["PinCodeAttempts"], with: client) }
            let request = Task { try await client.obtainAccessToken(forScope: "accessRestricted") }
            try await Self.waitOnMain { model.current != nil }
            request.cancel()
            // The view that asked went away: the prompt goes away too, and says why.
            try await Self.waitOnMain { model.current == nil }
            #expect(await model.lastAbandonment?.code == .cancelled)
            #expect(await model.submit(["pin": "1234"]) == false, "nothing left to answer")
        }
    }

    @Test func dismissingThePromptCancelsTheChallenge() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let model = PendingChallengeModel()
            try await MainActor.run { try model.register(securityChecks: ["PinCodeAttempts"], with: client) }
            let request = Task { await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") } }
            try await Self.waitOnMain { model.current != nil }
            await MainActor.run { model.current = nil }  // what `.sheet(item:)` does when the user swipes it away
            #expect(await request.value == .challengeCancelled(securityCheck: "PinCodeAttempts"))
        }
    }
}
#endif
