@testable import GatehouseChecks
import GatehouseProtocol
import HummingbirdBcrypt
import NIOPosix
import Testing

/// Identical bcrypt verifications asked at once run once; every caller still counts against its account.
@Suite(.timeLimit(.minutes(3))) struct BcryptFlightsTests {
    static let hash = Bcrypt.hash("right password", cost: 10)

    @Test func aBurstOfTheSameCredentialsRunsBcryptOnce() async throws {
        let flights = BcryptFlights(threads: PasswordVerifier.hashingThreads)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 { group.addTask { try await flights.verify("right password", hash: Self.hash) } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 16))
        #expect(flights.runCount <= 2, "16 at once share one run (two if the first ended before the last joined)")
        // Different passwords are verified each on their own, with their own answers.
        async let wrong = flights.verify("wrong password", hash: Self.hash)
        async let right = flights.verify("right password", hash: Self.hash)
        #expect(try await (wrong, right) == (false, true))
        // Later, the pair is verified anew (nothing is remembered after the flight).
        let before = flights.runCount
        #expect(try await flights.verify("right password", hash: Self.hash))
        #expect(flights.runCount == before + 1)
    }

    @Test func onlyOneAccountsVerificationsAreShared() async throws {
        // Two names checking one password against one hash (the decoy of unknown names) each run bcrypt: shared, they
        // answered faster than a known name raced against one.
        let flights = BcryptFlights(threads: PasswordVerifier.hashingThreads)
        async let first = flights.verify("guess", hash: Self.hash, account: "user:nobody-1")
        async let second = flights.verify("guess", hash: Self.hash, account: "user:nobody-2")
        #expect(try await (first, second) == (false, false))
        #expect(flights.runCount == 2)
    }

    @Test func identicalWrongPasswordsAtOnceEachCountAgainstTheAccount() async throws {
        let lockouts = InMemoryAccountLockouts(policy: AccountLockoutPolicy(threshold: 5))
        let verifier = PasswordVerifier(lockouts: lockouts, decoyCost: 4)
        let now = EpochTime.nowMillis()
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 { group.addTask { try await verifier.verify("guess", hash: Self.hash, account: "user:john", now: now) } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: false, count: 5))
        #expect(try await lockouts.isLocked("user:john", now: now), "five failures, though bcrypt may have run once")
        #expect(try await !verifier.verify("right password", hash: Self.hash, account: "user:john", now: now), "locked")
    }
}
