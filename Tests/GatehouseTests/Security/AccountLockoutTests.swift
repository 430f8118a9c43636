import Foundation
import GatehouseChecks
import GatehouseGateway
import GatehouseProtocol
import Testing

/// Per-account lockout: failed logins counted per user name across registrations and nodes, a locked account
/// answering like a wrong password, other users unaffected, unlocked after the duration.
@Suite(.timeLimit(.minutes(4))) struct AccountLockoutTests {
    /// Cheap hashes (cost 4) so that a thousand attempts stay quick; the decoy takes the same cost.
    static let johnHash = GatewayUser.hashing(username: "john", password: "demo", cost: 4).passwordHash
    static let janeHash = GatewayUser.hashing(username: "jane", password: "secret", cost: 4).passwordHash

    /// Every attempt comes from this machine: the source throttle is off unless a test sets it
    /// (``SourceThrottleTests``), so that failures are counted per account only.
    static func policy(threshold: Int = 10, durationSec: Int = 4, maxAttempts: Int = 5, sourceThrottle: String = "{ threshold: 0 }") -> String {
        """
        registrationThrottle: { perAddress: 0 }
        sourceThrottle: \(sourceThrottle)
        accountLockout: { threshold: \(threshold), windowSec: 600, durationSec: \(durationSec), growth: 2, maxDurationSec: \(durationSec) }
        securityChecks:
          UserLogin:
            class: UserLogin
            properties: { maxAttempts: \(maxAttempts), blockedStateExpirationSec: 600, successStateExpirationSec: 60 }
        applications:
          - { id: com.sample.pincodeswift, platform: ios }
        confidentialClients:
          - { id: reporter, secretHash: "\(johnHash)", allowedScope: "reports" }
        users:
          - { username: john, passwordHash: "\(johnHash)" }
          - { username: jane, passwordHash: "\(janeHash)" }
        """
    }

    static func login(_ client: ProtocolClient, _ username: String, _ password: String) async throws -> TestResponse {
        try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": .string(username), "password": .string(password)]])
    }

    /// A fresh registration (the key is shared: the server does not care, and RSA key generation is slow).
    static func freshClient(_ server: TestServer, key: ClientKeyPair) async throws -> ProtocolClient {
        var client = try ProtocolClient(server, key: key)
        try await client.register()
        return client
    }

    @Test func thePolicyCountsLocksGrowsAndForgets() {
        let policy = AccountLockoutPolicy(threshold: 3, window: 10_000, duration: 1_000, growth: 2, maxDuration: 3_000)
        var state: AccountFailureState? = nil
        for now in [0, 1, 2] as [Int64] { state = policy.failed(state, now: now) }
        #expect(state?.isLocked(at: 3) == true)
        #expect(state?.lockedUntil == 1_002)
        // Failures while locked keep counting: an attack in progress keeps the account locked, for longer.
        for now in [10, 11, 12] as [Int64] { state = policy.failed(state, now: now) }
        #expect((state?.lockedUntil ?? 0) == Int64(12 + 2_000))
        for now in [20, 21, 22] as [Int64] { state = policy.failed(state, now: now) }
        #expect((state?.lockedUntil ?? 0) == Int64(22 + 3_000))   // capped at maxDuration
        // Failures spread wider than the window never lock.
        var slow: AccountFailureState? = nil
        for now in [0, 20_000, 40_000, 60_000] as [Int64] { slow = policy.failed(slow, now: now) }
        #expect(slow?.isLocked(at: 60_001) == false)
        #expect(AccountLockoutPolicy.disabled.failed(nil, now: 0).isLocked(at: 1) == false)
    }

    @Test func decoyHashesTakeTheUsersCost() {
        #expect(PasswordVerifier.cost(of: "$2b$12$abcdefghijklmnopqrstuu") == 12)
        #expect(PasswordVerifier.decoyCost(for: [Self.johnHash]) == 4)
        #expect(PasswordVerifier.decoyCost(for: []) == 12)
    }

    /// A policy compiled again runs no bcrypt for its decoy: verifiers of one cost share the process's decoy.
    @Test func verifiersOfOneCostShareOneDecoy() {
        let lockouts = InMemoryAccountLockouts(policy: .disabled)
        let first = PasswordVerifier(lockouts: lockouts, decoyCost: 5)
        #expect(PasswordVerifier.cost(of: first.decoyHash) == 5)
        #expect(PasswordVerifier(lockouts: lockouts, decoyCost: 5).decoyHash == first.decoyHash)
        let other = PasswordVerifier(lockouts: lockouts, decoyCost: 6)
        #expect(PasswordVerifier.cost(of: other.decoyHash) == 6)
    }

    @Test func aLockedAccountAnswersLikeAWrongPasswordOnSQLite() async throws {
        // A 10 s lockout: the suite runs beside the others, and the steps below must all fall within it.
        try await TestServer.run(policy: Self.policy(threshold: 4, durationSec: 10)) { server in
            let key = try ClientKeyPair()
            var failures = 0
            while failures < 4 {   // 4 failures over two registrations (3 attempts each before the registration blocks)
                let client = try await Self.freshClient(server, key: key)
                for _ in 0..<2 where failures < 4 {
                    #expect(try await Self.login(client, "john", "wrong\(failures)").status == 401)
                    failures += 1
                }
            }
            let client = try await Self.freshClient(server, key: key)
            let refused = try await Self.login(client, "john", "demo")
            #expect(refused.status == 401)
            #expect(refused.json?["challenges"]?["UserLogin"]?["errorMsg"] == "Wrong username or password.")
            // Exactly what an unknown user gets: nothing tells the attacker the account exists or is locked.
            let unknown = try await Self.login(try await Self.freshClient(server, key: key), "nobody", "demo")
            #expect(unknown.json?["challenges"]?["UserLogin"]?["errorMsg"] == refused.json?["challenges"]?["UserLogin"]?["errorMsg"])
            #expect(try await Self.login(client, "jane", "secret").status == 200)
            try await Task.sleep(for: .seconds(10.2))
            #expect(try await Self.login(try await Self.freshClient(server, key: key), "john", "demo").status == 200)
        }
    }

    /// The must-show: 1,000 wrong passwords for `john` over 200 fresh registrations and two nodes on
    /// PostgreSQL → locked after the threshold, the right password refused while locked, `jane` unaffected,
    /// unlocked after the duration.
    @Test func aThousandWrongPasswordsOverTwoHundredRegistrationsAndTwoNodes() async throws {
        try await NodeCluster.run(policy: Self.policy(threshold: 10, durationSec: 4, maxAttempts: 5)) { cluster in
            let nodes = cluster.nodes
            let key = try ClientKeyPair()
            // The first 10 failures lock john, whatever the registrations and nodes they came through.
            for index in 0..<2 {
                let client = try await Self.freshClient(nodes[index % 2], key: key)
                for attempt in 0..<5 {
                    var onNode = client
                    onNode.move(to: nodes[attempt % 2])
                    // The registration's own attempts (MobileFirst's) block it at the fifth: 403.
                    #expect(try await Self.login(onNode, "john", "wrong-\(index)-\(attempt)").status == (attempt < 4 ? 401 : 403))
                }
            }
            #expect(try await Self.login(try await Self.freshClient(nodes[1], key: key), "john", "demo").status == 401)

            // The rest of the 1,000, 20 registrations at a time, alternating nodes; jane logs in meanwhile.
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                var all: [Int] = []
                for batch in 0..<198 {
                    group.addTask {
                        let client = try await Self.freshClient(nodes[batch % 2], key: key)
                        var seen: [Int] = []
                        for attempt in 0..<5 {
                            var onNode = client
                            onNode.move(to: nodes[(batch + attempt) % 2])
                            seen.append(try await Self.login(onNode, "john", "wrong-\(batch)-\(attempt)").status)
                        }
                        return seen
                    }
                    if batch >= 20, let seen = try await group.next() { all += seen }
                }
                for try await seen in group { all += seen }
                return all
            }
            #expect(statuses.count == 990)
            #expect(!statuses.contains(200))
            let jane = try await Self.freshClient(nodes[0], key: key)
            #expect(try await Self.login(jane, "jane", "secret").status == 200)
            // Still locked right after the attack, on either node.
            for node in nodes {
                let refused = try await Self.login(try await Self.freshClient(node, key: key), "john", "demo")
                #expect(refused.status == 401)
                #expect(refused.json?["challenges"]?["UserLogin"]?["errorMsg"] == "Wrong username or password.")
            }
            // Unlocked after the duration.
            try await Task.sleep(for: .seconds(4.5))
            #expect(try await Self.login(try await Self.freshClient(nodes[1], key: key), "john", "demo").status == 200)
        }
    }
}
