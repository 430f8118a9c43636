import HummingbirdBcrypt
import NIOCore
import NIOPosix
import Synchronization

/// Checks a password for an account with per-account lockout, in the same time whether the account exists,
/// is locked or neither: one bcrypt verification every time, against a decoy hash of the users' own cost when
/// there is no user.
public struct PasswordVerifier: Sendable {
    public let lockouts: any AccountLockouts
    /// A hash of a random text at the configured cost, checked when the account does not exist.
    public let decoyHash: String

    /// - Parameter decoyCost: the bcrypt cost of the real hashes (``PasswordVerifier/cost(of:)`` of them), so an
    ///   unknown user costs as long as a known one.
    public init(lockouts: any AccountLockouts, decoyCost: UInt8) {
        self.lockouts = lockouts
        decoyHash = Self.decoyHash(cost: decoyCost)
    }

    /// The process's decoy of each cost, made at its first use. It is a hash of a random text that never leaves
    /// the process, so every verifier of that cost can share it: a policy compiled again (each reload, each node
    /// start, each admin API check of a policy) costs no bcrypt run. Hashing one per verifier ran bcrypt at cost
    /// 12 per compile, holding up whichever thread compiled.
    private static let decoys = Mutex<[UInt8: String]>([:])

    static func decoyHash(cost: UInt8) -> String {
        decoys.withLock { decoys in
            if let made = decoys[cost] { return made }
            let made = Bcrypt.hash("gatehouse-decoy-\(UInt64.random(in: 0...UInt64.max))", cost: cost)
            decoys[cost] = made
            return made
        }
    }

    /// `true` when the account exists (`hash` given), the password matches and the account is not locked.
    /// Failures of existing accounts are counted; unknown accounts leave no trace (nothing to enumerate, nothing
    /// stored for made-up names).
    public func verify(_ password: String, hash: String?, account: String, now: Int64) async throws -> Bool {
        let locked = hash == nil ? false : try await lockouts.isLocked(account, now: now)
        let matches = try await Self.flights.verify(password, hash: hash ?? decoyHash)
        guard hash != nil else { return false }
        if matches, !locked {
            try await lockouts.recordSuccess(account)
            return true
        }
        try await lockouts.recordFailure(account, now: now)
        return false
    }

    /// The threads bcrypt runs on (tens to hundreds of ms of CPU each): threads of its own, so that a burst of
    /// logins holds up neither Swift concurrency's few threads nor NIO's blocking pool, where the store's calls wait.
    public static let hashingThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(System.coreCount, 2))
        pool.start()
        return pool
    }()

    /// The verifications in flight: identical ones asked at once run once (``BcryptFlights``).
    static let flights = BcryptFlights(threads: hashingThreads)

    /// The cost of a bcrypt hash (`$2b$12$...` → 12), if it is one.
    public static func cost(of hash: String) -> UInt8? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0].hasPrefix("2"), let cost = UInt8(parts[1]), (4...31).contains(cost) else { return nil }
        return cost
    }

    /// Whether `hash` is a whole bcrypt hash (`$2a$`, `$2b$`, `$2x$` or `$2y$`, a cost of 4 to 31, then 53 characters
    /// of bcrypt's base64: the salt and the digest), so that a placeholder or a truncated paste in a configuration is
    /// refused at start rather than found when nobody can log in.
    public static func isBcryptHash(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              "abxy".utf8.contains(bytes[2]), bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
              let cost = UInt8(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "/"): true
            default: false
            }
        }
    }

    /// The cost the decoy should have for these hashes: the highest among them, or `fallback` when there are none.
    public static func decoyCost(for hashes: [String], fallback: UInt8 = 12) -> UInt8 {
        hashes.compactMap(cost(of:)).max() ?? fallback
    }
}
