import Foundation
import GatehouseChecks
import GatehouseGateway
import GatehouseProtocol
import Testing

/// Hostile input round 2, findings 3 and 4: password checks throttled by the address they come from, never a
/// machine's secret locked by its id.
///
/// Before: ten wrong secrets for `demo-admin` from anyone locked the right one out for up to a day (and with it
/// resource servers and the gateway's introspection); a flood of `Basic <unknown>:<random>` token requests from
/// one machine took a real user's login from 0.10 s to 4.3 s. The "stranger" is `127.0.0.2`: another machine, as
/// the server sees it.
@Suite(.timeLimit(.minutes(4))) struct SourceThrottleTests {
    static let stranger = "127.0.0.2"

    static func policy(sourceThrottle: String = "{ threshold: 5, windowSec: 600, durationSec: 3, maxDurationSec: 3 }") -> String {
        AccountLockoutTests.policy(threshold: 3, durationSec: 60, sourceThrottle: sourceThrottle)
    }

    static func port(_ server: TestServer) -> Int { URLComponents(string: server.baseURL)?.port ?? 0 }

    /// A client-credentials token request for `client:secret` from `source`.
    static func token(_ server: TestServer, from source: String, client: String = "reporter", secret: String) async throws -> RawHTTPResponse {
        let body = Array("grant_type=client_credentials&scope=reports".utf8)
        return try await RawHTTPConnection.exchange(
            port: port(server), target: Array("/mfp/api/az/v1/token".utf8), method: "POST",
            headers: ["Authorization: Basic " + Data("\(client):\(secret)".utf8).base64EncodedString(),
                      "Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.count)"],
            body: body, from: source)
    }

    @Test func aStrangersWrongSecretsNeverLockAConfidentialClientOut() async throws {
        try await TestServer.run(policy: Self.policy(sourceThrottle: "{ threshold: 100 }")) { server in
            // The account lockout's threshold is 3: before, the third wrong secret locked `reporter` for everyone.
            for attempt in 0..<10 {
                #expect(try await Self.token(server, from: Self.stranger, secret: "guess\(attempt)").status == 401)
            }
            #expect(try await Self.token(server, from: "127.0.0.1", secret: "demo").status == 200)
            // A user's account still locks (people's passwords are guessable; a locked account answers like a wrong one).
            let key = try ClientKeyPair()
            for attempt in 0..<3 {
                #expect(try await AccountLockoutTests.login(try await AccountLockoutTests.freshClient(server, key: key), "john", "wrong\(attempt)").status == 401)
            }
            #expect(try await AccountLockoutTests.login(try await AccountLockoutTests.freshClient(server, key: key), "john", "demo").status == 401)
        }
    }

    @Test func aSourcesFailuresLockEveryPasswordCheckFromItAndNoOtherSource() async throws {
        try await TestServer.run(policy: Self.policy()) { server in
            // The stranger's right secret, remembered from now on by digest.
            #expect(try await Self.token(server, from: Self.stranger, secret: "demo").status == 200)
            // Five failures, whatever the names (known or not): the fifth locks the source.
            for attempt in 0..<5 {
                let client = attempt.isMultiple(of: 2) ? "reporter" : "nobody-\(attempt)"
                #expect(try await Self.token(server, from: Self.stranger, client: client, secret: "guess\(attempt)").status == 401)
            }
            // Locked: refused at once, saying so and for how long, even the right (remembered) secret.
            let refused = try await Self.token(server, from: Self.stranger, secret: "demo")
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "3")
            #expect(refused.json?["error"] == "too_many_requests", "\(refused.text)")
            #expect(try await Self.token(server, from: Self.stranger, client: "nobody", secret: "x").status == 429)
            // Another address is not affected: its right secret works, its wrong one is a plain 401.
            #expect(try await Self.token(server, from: "127.0.0.1", secret: "demo").status == 200)
            #expect(try await Self.token(server, from: "127.0.0.1", secret: "guess").status == 401)
            // After the lock's duration, the stranger's right secret works again.
            try await Task.sleep(for: .seconds(3.3))
            #expect(try await Self.token(server, from: Self.stranger, secret: "demo").status == 200)
        }
    }

    /// Wrong answers to any check count against the address, whatever the registration: registering again buys no
    /// fresh PIN attempts (before: 300 registrations a minute from one address, three PIN guesses each).
    @Test func wrongAnswersCountAgainstTheAddressAcrossRegistrations() async throws {
        try await TestServer.run(policy: TestPolicies.standard + "\nsourceThrottle: { threshold: 5, durationSec: 60 }\n") { server in
            let key = try ClientKeyPair()
            let wrong: [String: JSON] = ["PinCodeAttempts": ["pin": "0000"]]
            for guesses in [2, 2, 1] {
                let client = try await AccountLockoutTests.freshClient(server, key: key)
                for _ in 0..<guesses { #expect(try await client.preauthorize(scope: "accessRestricted", answers: wrong).status == 401) }
            }
            let fresh = try await AccountLockoutTests.freshClient(server, key: key)
            // Asking for the challenge is not guessing: it is answered; an answer, even the right one, is not judged.
            #expect(try await fresh.preauthorize(scope: "accessRestricted").status == 401)
            let refused = try await fresh.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(refused.status == 429)
            #expect(refused.json?["errorCode"] == "TOO_MANY_ATTEMPTS")
            #expect(refused.header("Retry-After") == "60")
        }
    }

    /// A wrong password inside a check is one wrong answer: counted once against the address (the round's), not once
    /// more by the password check.
    @Test func aWrongPasswordCountsOnceAgainstTheAddress() async throws {
        try await TestServer.run(policy: TestPolicies.standard + "\nsourceThrottle: { threshold: 3, durationSec: 60 }\n") { server in
            let key = try ClientKeyPair()
            for attempt in 0..<3 {
                let client = try await AccountLockoutTests.freshClient(server, key: key)
                #expect(try await AccountLockoutTests.login(client, "john", "wrong\(attempt)").status == 401, "attempt \(attempt)")
            }
            #expect(try await AccountLockoutTests.login(try await AccountLockoutTests.freshClient(server, key: key), "john", "demo").status == 429)
        }
    }

    /// A client we did not write: ApacheBench floods the token endpoint with a wrong `Basic` secret (HTTP/1.0, 8 at a
    /// time). Every answer is a refusal, ab completes, and afterwards this machine's address is locked — even the right
    /// secret is `429` from it — while another address gets its token.
    @Test func apacheBenchsFloodLocksItsAddressOnly() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ab") else {
            Issue.record("ab is not installed (apt-get install apache2-utils; scripts/test installs it)")
            return
        }
        try await TestServer.run(policy: Self.policy(sourceThrottle: "{ threshold: 50, durationSec: 60 }")) { server in
            let body = TestServer.temporaryDirectory() + ".form"
            try "grant_type=client_credentials&scope=reports".write(toFile: body, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: body) }
            // ab runs off the Swift concurrency pool: waiting for it there would stall the servers this process runs.
            let (status, text) = try await runOffThePool("/usr/bin/timeout", ["60", "/usr/bin/ab", "-q", "-s", "10", "-n", "400", "-c", "8", "-A", "intruder:wrong-secret",
                                 "-p", body, "-T", "application/x-www-form-urlencoded", server.baseURL + "/mfp/api/az/v1/token"])
            #expect(status == 0, "\(text)")
            #expect(text.contains("Complete requests:      400"), "\(text)")
            #expect(text.contains("Non-2xx responses:      400"), "\(text)")
            #expect(try await Self.token(server, from: "127.0.0.1", secret: "demo").status == 429)
            #expect(try await Self.token(server, from: Self.stranger, secret: "demo").status == 200)
        }
    }

    /// Counted in the store: a source locked by failures seen on one node is refused on the other within the view's
    /// refresh (2 s), even its remembered right secret.
    @Test func aSourceLockedOnOneNodeIsRefusedOnTheOther() async throws {
        try await NodeCluster.run(policy: Self.policy(sourceThrottle: "{ threshold: 3, windowSec: 600, durationSec: 60 }")) { cluster in
            let nodes = cluster.nodes
            for node in nodes { #expect(try await Self.token(node, from: Self.stranger, secret: "demo").status == 200) }
            for attempt in 0..<3 { #expect(try await Self.token(nodes[1], from: Self.stranger, secret: "guess\(attempt)").status == 401) }
            #expect(try await Self.token(nodes[1], from: Self.stranger, secret: "demo").status == 429, "locked where the failures were seen: at once")
            let start = ContinuousClock.now
            var refused = false
            while !refused, ContinuousClock.now - start < .seconds(10) {
                refused = try await Self.token(nodes[0], from: Self.stranger, secret: "demo").status == 429
                if !refused { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(refused)
            #expect(ContinuousClock.now - start < .seconds(4.5))
            #expect(try await Self.token(nodes[0], from: "127.0.0.1", secret: "demo").status == 200)
        }
    }

    /// The issue's figure: a real user's login while 1,000 unauthenticated wrong-secret requests arrive from one
    /// machine, against the same login on the idle server (before: 0.10 s → 4.3 s; goal: within 2×). Printed for
    /// SECURITY.md.
    @Test func aFloodFromOneAddressLeavesAnotherUsersLoginWithinTwiceItsIdleTime() async throws {
        // john's hash is cost 10 (as a real policy's would be): the decoy for unknown clients takes that cost too.
        try await TestServer.run(policy: TestPolicies.standard) { server in
            let key = try ClientKeyPair()
            func login() async throws -> Duration {
                let client = try await AccountLockoutTests.freshClient(server, key: key)
                let start = ContinuousClock.now
                let answer = try await AccountLockoutTests.login(client, "john", "demo")
                guard answer.status == 200 else { throw TestFailure("john's login: \(answer.status)") }
                return ContinuousClock.now - start
            }
            _ = try await login()   // warm
            var idle: [Duration] = []
            for _ in 0..<7 { idle.append(try await login()) }

            let flooding = Task { () -> [Int: Int] in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    var statuses: [Int: Int] = [:]
                    for index in 0..<1000 {
                        if index >= 32, let status = try await group.next() { statuses[status, default: 0] += 1 }
                        group.addTask {
                            try await Self.token(server, from: Self.stranger, client: "intruder-\(index)", secret: UUID().uuidString).status
                        }
                    }
                    for try await status in group { statuses[status, default: 0] += 1 }
                    return statuses
                }
            }
            var during: [Duration] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while during.count < 7, ContinuousClock.now < deadline { during.append(try await login()) }
            let statuses = try await flooding.value

            func median(_ values: [Duration]) -> Double {
                let sorted = values.sorted()
                let middle = sorted[sorted.count / 2].components
                return Double(middle.seconds) + Double(middle.attoseconds) / 1e18
            }
            let ratio = median(during) / median(idle)
            print("SourceThrottle figure: john's login idle \(String(format: "%.3f", median(idle))) s, during a 1,000-request flood from one address "
                  + "\(String(format: "%.3f", median(during))) s (\(String(format: "%.2f", ratio))×); flood answers \(statuses.sorted { $0.key < $1.key })")
            #expect(statuses.values.reduce(0, +) == 1000)
            #expect(Set(statuses.keys).isSubset(of: [401, 429]), "\(statuses)")
            #expect(statuses[429, default: 0] > 0)
            #expect(ratio <= 2.0, "john's login took \(ratio)× its idle time during the flood")
        }
    }
}
