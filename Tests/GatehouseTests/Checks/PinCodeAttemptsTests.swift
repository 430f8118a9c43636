import Foundation
import GatehouseProtocol
import Testing

/// Seeds 002/003: PinCodeAttempts with three attempts and a block.
@Suite(.timeLimit(.minutes(3))) struct PinCodeAttemptsTests {
    /// (A 5-second block: a loaded machine outlived the standard policy's 2 s before the right PIN was sent.)
    @Test func attemptsCountDownThenBlockThenFreshChallenge() async throws {
        let policy = TestPolicies.standard.replacingOccurrences(
            of: "maxAttempts: 3, blockedStateExpirationSec: 2, successStateExpirationSec: 60",
            with: "maxAttempts: 3, blockedStateExpirationSec: 5, successStateExpirationSec: 60")
        try await TestServer.run(policy: policy) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let start = try await client.preauthorize(scope: "accessRestricted")
            #expect(start.status == 401)
            #expect(start.json?["challenges"]?["PinCodeAttempts"] == ["errorMsg": nil, "remainingAttempts": 3])

            let wrong1 = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]])
            #expect(wrong1.status == 401)
            #expect(wrong1.json?["challenges"]?["PinCodeAttempts"] == ["errorMsg": "The pin code is not valid.", "remainingAttempts": 2])
            let wrong2 = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]])
            #expect(wrong2.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 1)
            let wrong3 = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]])
            #expect(wrong3.status == 403)
            #expect(wrong3.json?["failures"] == ["PinCodeAttempts": ["failure": "Account blocked"]])

            // While blocked, even the right PIN is refused.
            let rightWhileBlocked = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(rightWhileBlocked.status == 403)
            #expect(rightWhileBlocked.json?["failures"] == ["PinCodeAttempts": ["failure": "Account blocked"]])
            let authorization = try await client.authorize(scope: "accessRestricted")
            #expect(authorization.status == 403)

            // After the 5-second block: a fresh challenge with all attempts.
            try await Task.sleep(for: .milliseconds(5300))
            let fresh = try await client.preauthorize(scope: "accessRestricted")
            #expect(fresh.status == 401)
            #expect(fresh.json?["challenges"]?["PinCodeAttempts"] == ["errorMsg": nil, "remainingAttempts": 3])
            let right = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(right.status == 200)
        }
    }

    /// With `blockedStateExpirationSec` 0 (the default) the block ends as it starts (reference §1.4): the last
    /// wrong answer already meets an expired state, so the client gets a fresh challenge, never a failure.
    @Test func withTheDefaultBlockOfZeroTheNextRoundIsAFreshChallenge() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            _ = try await client.preauthorize(scope: "PinDefaultBlock")
            for remaining in [2, 1] {
                let wrong = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "0"]])
                #expect(wrong.status == 401)
                #expect(wrong.json?["challenges"]?["PinDefaultBlock"]?["remainingAttempts"]?.intValue == remaining)
            }
            let last = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "0"]])
            #expect(last.status == 401)
            #expect(last.json?["challenges"]?["PinDefaultBlock"] == ["errorMsg": nil, "remainingAttempts": 3])
            let right = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "4321"]])
            #expect(right.status == 200)
        }
    }

    @Test func fiftyConcurrentWrongAnswersNeverConsumeMoreThanMaxAttempts() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            _ = try await client.preauthorize(scope: "PinLongBlock")
            let frozen = client
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await frozen.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "9999"]]) }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(responses.allSatisfy { $0.status == 401 || $0.status == 403 })
            let challenges = responses.filter { $0.status == 401 }
            let remaining = challenges.compactMap { $0.json?["challenges"]?["PinLongBlock"]?["remainingAttempts"]?.intValue }.sorted()
            #expect(remaining == [1, 2], "exactly two wrong answers were counted before the block, then only failures")
            #expect(responses.filter { $0.status == 403 }.count == 48)

            // No answer is accepted after the block, right or wrong, sent together.
            let after = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for i in 0..<10 {
                    group.addTask { try await frozen.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": i == 5 ? "1234" : "9"]]) }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(after.allSatisfy { $0.status == 403 })
        }
    }
}
