import Synchronization

/// A factor a user enrolled with a check beyond the password (a TOTP secret and its recovery codes), kept by the
/// store for every node: the check's own data, opaque to the store.
public struct UserFactorRecord: Sendable, Equatable {
    public var username: String
    /// The name of the check the user enrolled with (its name in the policy).
    public var factor: String
    /// The check's data, JSON text.
    public var data: String
    /// When the user enrolled, epoch milliseconds.
    public var enrolledAt: Int64
    /// Each write adds one; a write names the version it read (0: none yet), so two nodes never both use one
    /// recovery code.
    public var version: Int64

    public init(username: String, factor: String, data: String, enrolledAt: Int64, version: Int64 = 0) {
        self.username = username
        self.factor = factor
        self.data = data
        self.enrolledAt = enrolledAt
        self.version = version
    }
}

/// Where users' enrolled factors are kept (the store, shared by every node).
public protocol UserFactorStore: Sendable {
    /// The factor `factor` of `username`, if enrolled.
    func userFactor(username: String, factor: String) async throws -> UserFactorRecord?
    /// Writes `record` if the stored version is `expectedVersion` (0: only if there is none); `false` when another
    /// write came first.
    func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool
    /// Every factor `username` enrolled, by factor name.
    func userFactors(username: String) async throws -> [UserFactorRecord]
    /// Forgets `username`'s factor `factor` (every factor when `nil`): the user enrols again at the next login. How
    /// many were forgotten.
    func deleteUserFactors(username: String, factor: String?) async throws -> Int
}

/// Values a check accepts once across every node until they expire: a one-time code's time step. The server hands
/// checks the store's record of used values (the one client assertions use).
public struct OneTimeUses: Sendable {
    /// Records `key` as used until `expiresAt` (epoch ms); `false` when it was used already.
    public let consume: @Sendable (_ key: String, _ expiresAt: Int64, _ now: Int64) async throws -> Bool

    public init(consume: @escaping @Sendable (_ key: String, _ expiresAt: Int64, _ now: Int64) async throws -> Bool) {
        self.consume = consume
    }

    /// Kept in this process only: for a single process or a policy checked without a server.
    public static func inMemory() -> OneTimeUses {
        let used = Mutex<[String: Int64]>([:])
        return OneTimeUses { key, expiresAt, now in
            used.withLock { used in
                if used.count > 10_000 { used = used.filter { $0.value >= now } }
                if let until = used[key], until >= now { return false }
                used[key] = expiresAt
                return true
            }
        }
    }
}

/// Factors kept in this process only: for a single process or a policy checked without a server.
public final class InMemoryUserFactors: UserFactorStore {
    private let records = Mutex<[String: UserFactorRecord]>([:])

    public init() {}

    private static func key(_ username: String, _ factor: String) -> String { "\(factor)\u{0}\(username)" }

    public func userFactor(username: String, factor: String) async throws -> UserFactorRecord? {
        records.withLock { $0[Self.key(username, factor)] }
    }

    public func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool {
        records.withLock { records in
            let key = Self.key(record.username, record.factor)
            guard (records[key]?.version ?? 0) == expectedVersion else { return false }
            var saved = record
            saved.version = expectedVersion + 1
            records[key] = saved
            return true
        }
    }

    public func userFactors(username: String) async throws -> [UserFactorRecord] {
        records.withLock { $0.values.filter { $0.username == username }.sorted { $0.factor < $1.factor } }
    }

    public func deleteUserFactors(username: String, factor: String?) async throws -> Int {
        records.withLock { records in
            let keys = records.filter { $0.value.username == username && (factor == nil || $0.value.factor == factor) }.map(\.key)
            for key in keys { records[key] = nil }
            return keys.count
        }
    }
}
