import Foundation
import GatehouseChecks
import GatehouseGateway
import Testing

/// The gateway's `users` modules throttled by the client's address, as the server's password checks are: wrong
/// passwords from one address, whatever the names, lock the address for a while — `429` with `Retry-After`, even for
/// a right password — and nobody else. Before, one address could try names and passwords unbounded, held back only
/// by each account's lockout (made-up names have none) and the process-wide bound on waiting bcrypt runs.
@Suite(.timeLimit(.minutes(3))) struct GatewaySourceThrottleTests {
    static let stranger = "127.0.0.2"

    static func get(_ fixture: GatewayFixture, from source: String, _ user: String, _ password: String) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(port: fixture.gatewayApp.port, target: "/echo/x",
                                             headers: ["Authorization: " + basicAuthorization(user, password)], from: source)
    }

    static func run(threshold: Int, cost: UInt8 = 4, _ body: (GatewayFixture) async throws -> Void) async throws {
        let joe = GatewayUser.hashing(username: "joe", password: "welcome", roles: ["AUTHORIZED"], cost: cost)
        let realm = RealmConfiguration(name: "demo", description: "Demo Realm", scheme: .basic,
                                       loginModules: [LoginModuleConfiguration(type: "users", flag: .required, users: [joe])])
        try await GatewayFixture.run({ upstream in
            var configuration = GatewayConfiguration(realms: [realm], services: [
                ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo"),
            ])
            configuration.sourceThrottle = AccountLockoutSettings(threshold: threshold, durationSec: 60)
            return configuration
        }, body)
    }

    /// A client we did not write: ApacheBench's `-A` flood of a made-up user, 8 at a time. ab completes, every answer
    /// a refusal; then this machine's address is locked — joe's right password is `429` from it — and not another.
    @Test func apacheBenchsBasicFloodLocksItsAddressOnly() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ab") else {
            Issue.record("ab is not installed (apt-get install apache2-utils; scripts/test installs it)")
            return
        }
        try await Self.run(threshold: 50) { fixture in
            // ab runs off the Swift concurrency pool: waiting for it there would stall the servers this process runs.
            let (status, text) = try await runOffThePool("/usr/bin/timeout", ["60", "/usr/bin/ab", "-q", "-s", "10", "-n", "300", "-c", "8", "-A", "intruder:wrong",
                                 fixture.base + "/echo/x"])
            #expect(status == 0, "\(text)")
            #expect(text.contains("Complete requests:      300"), "\(text)")
            #expect(text.contains("Non-2xx responses:      300"), "\(text)")
            #expect(try await Self.get(fixture, from: "127.0.0.1", "joe", "welcome").status == 429)
            #expect(try await Self.get(fixture, from: Self.stranger, "joe", "welcome").status == 200)
            #expect(fixture.gateway.statistics.counters(realm: "demo").throttled > 0)
        }
    }

    /// A burst of requests with one right password (an app opening its WebSockets, the password not yet remembered)
    /// shares one bcrypt run and is let in whole. Before, each request waited in the address's lane behind the run it
    /// could have shared, ran its own, and past the lane's 32 places got `429` (a helper's benchmark: 167 of 200).
    @Test func aBurstOfOneRightPasswordSharesOneCheckAndIsNotThrottled() async throws {
        try await Self.run(threshold: 50, cost: 10) { fixture in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 { group.addTask { try await Self.get(fixture, from: Self.stranger, "joe", "welcome").status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 != 200 }.isEmpty, "not let in: \(Dictionary(grouping: statuses.filter { $0 != 200 }, by: { $0 }).mapValues(\.count))")
            #expect(fixture.gateway.statistics.counters(realm: "demo").throttled == 0)
        }
    }

    @Test func anAddressesWrongPasswordsLockItAndNoOtherAddress() async throws {
        try await Self.run(threshold: 3) { fixture in
            // Three wrong passwords, made-up names and joe's, from one address.
            for (user, password) in [("nobody", "x"), ("joe", "guess"), ("somebody", "y")] {
                #expect(try await Self.get(fixture, from: Self.stranger, user, password).status == 401)
            }
            let refused = try await Self.get(fixture, from: Self.stranger, "joe", "welcome")
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "60")
            #expect(refused.text.contains("too_many_requests"))
            // joe from another address is let in; the realm counted the refusal as throttled, never as a failure.
            #expect(try await Self.get(fixture, from: "127.0.0.1", "joe", "welcome").status == 200)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.throttled == 1)
            #expect(counters.failures == 3)
        }
    }

    /// A right password the gateway remembers (verified in the last minute, answered on the event loop) is refused
    /// from a locked address too: a guesser who hits it must not learn it is right. (Before, the remembered pair
    /// answered 200 from the locked address.)
    @Test func aRememberedPasswordIsRefusedFromALockedAddress() async throws {
        try await Self.run(threshold: 3) { fixture async throws in
            #expect(try await Self.get(fixture, from: Self.stranger, "joe", "welcome").status == 200)
            #expect(try await Self.get(fixture, from: Self.stranger, "joe", "welcome").status == 200, "remembered")
            // Wrong passwords of other names only: joe's account stays settled, its pair remembered.
            for user in ["nobody", "somebody", "someone"] {
                #expect(try await Self.get(fixture, from: Self.stranger, user, "guess").status == 401)
            }
            #expect(try await Self.get(fixture, from: Self.stranger, "joe", "welcome").status == 429)
            #expect(try await Self.get(fixture, from: "127.0.0.1", "joe", "welcome").status == 200, "another address")
        }
    }
}
