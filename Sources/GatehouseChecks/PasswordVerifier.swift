import HummingbirdBcrypt
import NIOCore
public import NIOPosix
import Synchronization

/// Checks a password for an account with per-account lockout, in the same time whether the account exists,
/// is locked or neither: one bcrypt verification every time, against a decoy hash of the users' own cost when
/// there is no user. Every check is also throttled by the request's source address (``RequestSource``) when a
/// ``SourceThrottle`` is given.
public struct PasswordVerifier: Sendable {
    public let lockouts: any AccountLockouts
    /// A hash of a random text at the configured cost, checked when the account does not exist.
    public let decoyHash: String
    /// Checks and failures per source address; `nil`: not throttled by source.
    public let sources: SourceThrottle?

    /// - Parameters:
    ///   - lockouts: where failed logins are counted (the per-account lockout).
    ///   - decoyCost: the bcrypt cost of the real hashes (``PasswordVerifier/cost(of:)`` of them), so an unknown user
    ///     costs as long as a known one.
    ///   - sources: checks and failures per source address; `nil`: not throttled by source.
    public init(lockouts: any AccountLockouts, decoyCost: UInt8, sources: SourceThrottle? = nil) {
        self.lockouts = lockouts
        self.sources = sources
        decoyHash = Self.decoyHash(cost: decoyCost)
    }

    /// The process's decoy of each cost, made at its first use. It is a hash of a random text that never leaves
    /// the process, so every verifier of that cost can share it: a policy compiled again (each reload, each node
    /// start, each admin API check of a policy) costs no bcrypt run. Hashing one per verifier ran bcrypt at cost
    /// 12 per compile, holding up whichever thread compiled.
    private static let decoys = Mutex<[UInt8: String]>([:])

    static func decoyHash(cost requested: UInt8) -> String {
        let cost = min(requested, maximumCost)
        if let made = decoys.withLock({ $0[cost] }) { return made }
        // Hashed outside the lock: a decoy of one cost never holds up a verifier of another (two first uses of a
        // cost at once hash twice, and the first one kept wins).
        let made = Bcrypt.hash("gatehouse-decoy-\(UInt64.random(in: 0...UInt64.max))", cost: cost)
        return decoys.withLock { decoys in
            if let kept = decoys[cost] { return kept }
            decoys[cost] = made
            return made
        }
    }

    /// `true` when the account exists (`hash` given), the password matches and the account is not locked.
    /// Failures of existing accounts are counted; unknown accounts leave no trace (nothing to enumerate, nothing
    /// stored for made-up names).
    /// One bcrypt verification (shared with identical ones in flight), a span of its own in a traced request.
    private static func bcrypt(_ password: String, hash: String, account: String) async throws -> Bool {
        try await TracedWork.run("bcrypt verify") { try await flights.verify(password, hash: hash, account: account) }
    }

    /// Throws ``SourceThrottle/Throttled`` when the request's source is refused (locked, or too many of its checks
    /// waiting).
    ///
    /// A wrong password is counted against the account here, and against the request's source by the round that asked
    /// (as every wrong answer to a check is), not here: once per guess.
    ///
    /// A check identical to one running (the same password for the same account: a client's burst of requests with
    /// the same credentials) joins that run without a place in its source's lane: it costs no bcrypt run, and waiting
    /// in the lane behind the very run it would share made such a burst wait in turn, one run each, and overflow the
    /// lane (`429` for right passwords).
    public func verify(_ password: String, hash: String?, account: String, now: Int64) async throws -> Bool {
        let checked = hash ?? decoyHash
        if let running = Self.flights.running(password, hash: checked, account: account) {
            try await refuseIfSourceLocked(now: now)
            return try await settle(hash: hash, account: account, now: now) { try await running.value }
        }
        return try await throttled(now: now, countsFailure: false) {
            try await settle(hash: hash, account: account, now: now) { try await Self.bcrypt(password, hash: checked, account: account) }
        }
    }

    /// Whether `matches` says yes for an account that exists (`hash` given) and is not locked; counts the outcome
    /// against the account.
    private func settle(hash: String?, account: String, now: Int64, _ matches: () async throws -> Bool) async throws -> Bool {
        let locked = hash == nil ? false : try await lockouts.isLocked(account, now: now)
        let matched = try await matches()
        guard hash != nil else { return false }
        if matched, !locked {
            try await lockouts.recordSuccess(account)
            return true
        }
        try await lockouts.recordFailure(account, now: now)
        return false
    }

    /// A machine's secret (a confidential client's): one bcrypt run against `hash` or the decoy, throttled by source
    /// but never locked by account — anyone could otherwise lock a back-end out by sending its id with wrong secrets
    /// (machine secrets are long and random: guessing them is pointless, shutting their owner out is not).
    public func verifyMachineSecret(_ secret: String, hash: String?, account: String, now: Int64) async throws -> Bool {
        try await throttled(now: now) {
            let matches = try await Self.bcrypt(secret, hash: hash ?? decoyHash, account: account)
            return hash != nil && matches
        }
    }

    /// Throws ``SourceThrottle/Throttled`` when the request's source is locked now: for a secret accepted without a
    /// bcrypt run (remembered), which a locked source must not be able to try either.
    public func refuseIfSourceLocked(now: Int64) async throws {
        guard let sources, let source = RequestSource.address else { return }
        try await sources.refuseIfLocked(source, now: now)
    }

    /// ``refuseIfSourceLocked(now:)`` from memory alone: `true` when the request's source is known not to be locked
    /// (or not throttled); `false` when it is locked or this node cannot tell without the store.
    public func isSourceKnownUnlocked(now: Int64) -> Bool {
        guard let sources, let source = RequestSource.address else { return true }
        return sources.isKnownUnlocked(source, now: now)
    }

    /// ``isSourceKnownUnlocked(now:)`` for `source`, where no task names it (an event loop): `false` without one
    /// when sources are throttled (the caller then takes the path that names it).
    public func isSourceKnownUnlocked(_ source: String?, now: Int64) -> Bool {
        guard let sources else { return true }
        guard let source else { return false }
        return sources.isKnownUnlocked(source, now: now)
    }

    /// Counts a failure against the request's source (a wrong password where no round counts it: the gateway's
    /// login modules).
    public func recordSourceFailure(now: Int64) async throws {
        guard let sources, let source = RequestSource.address else { return }
        try await sources.recordFailure(source, now: now)
    }

    private func throttled(now: Int64, countsFailure: Bool = true, _ check: () async throws -> Bool) async throws -> Bool {
        guard let sources, let source = RequestSource.address else { return try await check() }
        return try await sources.run(from: source, now: now, countsFailure: countsFailure, check)
    }

    /// The threads bcrypt runs on (tens to hundreds of ms of CPU each): threads of its own, so that a burst of
    /// logins holds up neither Swift concurrency's few threads nor NIO's blocking pool, where the store's calls wait.
    public static let hashingThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(System.coreCount, 2))
        pool.start()
        return pool
    }()

    /// The verifications in flight: identical ones asked at once run once (``BcryptFlights``).
    /// At most eight runs a hashing thread wait or run (16 on two cores: about a second at cost 10 here).
    static let flights = BcryptFlights(threads: hashingThreads, maximumQueued: 8 * max(System.coreCount, 2))

    /// The highest bcrypt cost accepted in a policy or a gateway's users. Each step doubles a verification (cost 15
    /// is about 2 s of one core here); above it, a hash in a policy sent to `POST /admin/v1/policy/validate` (a
    /// read-only token) or a few logins would occupy the process for minutes — cost 31 is days.
    public static let maximumCost: UInt8 = 15

    /// Why `hash`'s cost cannot be accepted (over ``maximumCost``), in words, or `nil`.
    public static func costProblem(of hash: String) -> String? {
        guard let cost = cost(of: hash), cost > maximumCost else { return nil }
        return "has bcrypt cost \(cost), over the highest accepted (\(maximumCost)): every login would take \(1 << Int(cost - 12)) times "
            + "a cost-12 one; hash it again with `gatehouse hash-password --cost 12`"
    }

    /// The cost of a bcrypt hash (`$2b$12$...` → 12), if it is one.
    public static func cost(of hash: String) -> UInt8? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0].hasPrefix("2"), let cost = UInt8(parts[1]), (4...31).contains(cost) else { return nil }
        return cost
    }

    /// `hash` as the bcrypt library verifies it, when it is a whole bcrypt hash: `$2a$` and `$2b$` as given, `$2y$`
    /// (PHP's and `htpasswd -B`'s name for the same algorithm) as `$2b$`; then a cost of two digits, 04 to 31, and
    /// 53 characters of bcrypt's base64 (the salt and the digest). `nil` for anything else — `$2x$` (a flawed
    /// variant), a placeholder, a truncated paste — so that a configuration that nobody could log in with is refused
    /// at start rather than found out at the first login.
    public static func usableBcryptHash(_ hash: String) -> String? {
        let bytes = Array(hash.utf8)
        func digit(_ byte: UInt8) -> Int? { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil }
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"), "aby".utf8.contains(bytes[2]),
              bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
              let tens = digit(bytes[4]), let units = digit(bytes[5]), (4...31).contains(tens * 10 + units)
        else { return nil }
        let alphabet = bytes[7...].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "/"): true
            default: false
            }
        }
        guard alphabet else { return nil }
        return bytes[2] == UInt8(ascii: "y") ? "$2b" + hash.dropFirst(3) : hash
    }

    /// The cost the decoy should have for these hashes: the highest among them, or `fallback` when there are none.
    /// A hash over ``maximumCost`` is left out: its configuration is refused (a decoy is made before the hashes' own
    /// checks run, and must not cost what the refused hash would).
    public static func decoyCost(for hashes: [String], fallback: UInt8 = 12) -> UInt8 {
        hashes.compactMap(cost(of:)).filter { $0 <= maximumCost }.max() ?? fallback
    }
}
