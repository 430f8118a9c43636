public import GatehouseChecks
import GatehouseProtocol

/// Why a store refused a write: a stable ``Code`` (new codes can be added without breaking a caller's code).
///
/// Match it as `catch StoreError.duplicate`, or compare `error.code`.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// A record with this key exists already.
        public static let duplicate = Code(description: "duplicate")
        /// The record to update does not exist.
        public static let notFound = Code(description: "notFound")
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    /// A record with this key exists already.
    public static let duplicate = StoreError(.duplicate)
    /// The record to update does not exist.
    public static let notFound = StoreError(.notFound)

    public var description: String { "store error: \(code)" }

    /// `catch StoreError.duplicate`: whether `error` is a store error with the pattern's code.
    public static func ~= (pattern: StoreError, error: any Error) -> Bool {
        (error as? StoreError)?.code == pattern.code
    }
}

/// Where Gatehouse keeps everything that outlives a request: registrations, client states, codes, keys, users. The
/// two stores (SQLite, PostgreSQL) are each all of it; every consumer takes only the part it uses (a `KeyRing` a
/// ``SigningKeyStore``, the audit log an ``AuditStore``, ...).
///
/// Client state is versioned: ``ClientStateStore/commit(clientID:writes:)`` applies all writes of a round or none, and
/// refuses them when another round changed the state meanwhile, so that no update is lost and no attempt is granted
/// twice, on one node or several.
public protocol GatehouseStore: UserDirectory, UserFactorStore, StoreOutages, RegistrationStore, DeviceAccessStore, ClientStateStore,
    AuthorizationCodeStore, SigningKeyStore, UserRecordStore, RevocationStore, AccountFailureStore, AuditStore, PolicyStore,
    UsedAssertionStore {}

/// Recognises the store's own outages (its database's errors).
public protocol StoreOutages: Sendable {
    /// Whether `error`, thrown by one of this store's calls, is an outage (``StoreUnavailable``: the database cannot
    /// answer now) rather than a refusal or a bug. Stores recognise their database's errors.
    func outage(_ error: any Error) -> StoreUnavailable?
}

/// Client registrations: what a client registered with, and its active user.
public protocol RegistrationStore: Sendable {
    /// Stores a new registration; throws ``StoreError/duplicate`` if the id is taken.
    func createRegistration(_ registration: ClientRegistrationRecord) async throws
    /// Replaces an existing registration; throws ``StoreError/notFound`` if there is none.
    func updateRegistration(_ registration: ClientRegistrationRecord) async throws
    /// The registration of `clientID`.
    func registration(clientID: String) async throws -> ClientRegistrationRecord?
    /// Registrations matching `query`, ordered by client id, with their active user.
    func registrations(_ query: RegistrationQuery) async throws -> [RegistrationListing]
    /// The registrations by application, platform and version (at most `limit` versions, ordered by those), counted.
    func applicationVersions(limit: Int) async throws -> [ApplicationVersionCount]
    /// Records the client's active user (`nil`: none), by which ``registrations(_:)`` finds it.
    func setActiveUser(clientID: String, userID: String?) async throws
    /// Deletes the registration of `clientID` and all its state; `false` if there was none.
    func deleteRegistration(clientID: String) async throws -> Bool
}

/// The operator's holds on devices (lost, stolen, an application blocked on it).
public protocol DeviceAccessStore: Sendable {
    /// The operator's hold on each of `deviceIDs` that has one.
    func deviceAccess(deviceIDs: [String]) async throws -> [DeviceAccessRecord]
    /// Stores the hold on a device, replacing any; a record that blocks nothing removes it.
    func saveDeviceAccess(_ record: DeviceAccessRecord) async throws
    /// Deletes every registration of the device (with their state) and its hold; the client ids deleted.
    func deleteDevice(deviceID: String) async throws -> [String]
}

/// Each client's security-check state, versioned: a round's writes all apply or none do.
public protocol ClientStateStore: Sendable {
    /// Every stored piece of the client's state, by name.
    func clientState(clientID: String) async throws -> [String: VersionedState]
    /// The registration of `clientID`, every piece of its state and the hold on its device, read together (one read,
    /// one round trip): what every pre-authorization round starts with. `nil` when the client is not registered.
    func storedClient(clientID: String) async throws -> StoredClient?
    /// Applies all `writes` atomically if every expected version still holds; returns `false` (and writes
    /// nothing) on a conflict.
    func commit(clientID: String, writes: [StateWrite]) async throws -> Bool
}

/// Authorization codes, each used once.
public protocol AuthorizationCodeStore: Sendable {
    /// Stores a new authorization code.
    func insertCode(_ code: AuthorizationCodeRecord) async throws
    /// Removes and returns the code with this hash: a code is used once.
    func consumeCode(hash: String) async throws -> AuthorizationCodeRecord?
}

/// The token signing keys, rotated and retired.
public protocol SigningKeyStore: Sendable {
    /// All signing keys, oldest first.
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Stores a signing key.
    func insertSigningKey(_ key: SigningKeyRecord) async throws
    /// Stores `key` only if the store holds no signing key yet, atomically (nodes starting together on an empty
    /// store race here: exactly one key wins, and every node signs with it). Returns whether `key` was stored.
    func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool
    /// Replaces a stored signing key's record (to retire it); throws ``StoreError/notFound`` if there is none.
    func updateSigningKey(_ key: SigningKeyRecord) async throws
}

/// The users that login checks authenticate.
public protocol UserRecordStore: Sendable {
    /// Creates or replaces a user.
    func upsertUser(_ user: UserRecord) async throws
}

/// Revocations: tokens issued before them no longer hold.
public protocol RevocationStore: Sendable {
    /// Records that tokens issued before `revocation.revokedAt` no longer hold: a check stopped granting a client
    /// (logout, block), or a token was revoked.
    func insertRevocation(_ revocation: RevocationRecord) async throws
    /// Revocations recorded at or after `since` (epoch ms), oldest first.
    func revocations(since: Int64) async throws -> [RevocationRecord]
}

/// Failed logins by account (account lockout), shared by every node.
public protocol AccountFailureStore: Sendable {
    /// The failed logins of `account`, if any are remembered.
    func accountFailures(_ account: String) async throws -> AccountFailureRecord?
    /// Stores `state` for `account` if its stored version is still `expectedVersion` (0: not stored); `false`
    /// (nothing written) when another writer came first.
    func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool
    /// Forgets the failed logins of `account` (a success, or an operator's unlock).
    func deleteAccountFailures(_ account: String) async throws
    /// The accounts locked at `now`, at most `limit`.
    func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord]
}

/// The audit log.
public protocol AuditStore: Sendable {
    /// Appends events to the audit log, in order, each with a new increasing id.
    func appendAudit(_ events: [AuditEvent]) async throws
    /// Audit events with an id greater than `after`, oldest first, at most `limit`.
    func auditEvents(after: Int64, limit: Int) async throws -> [AuditEvent]
    /// Deletes audit events older than `time` (epoch ms): the log's retention. Returns how many.
    @discardableResult
    func deleteAudit(before time: Int64) async throws -> Int
    /// Audit events from `since` (epoch ms, inclusive) to `until` (exclusive) counted by kind and by bucket of
    /// `bucketMillis` (bucket `(time - since) / bucketMillis`), ordered by bucket then kind: the console's chart.
    func auditActivity(since: Int64, until: Int64, bucketMillis: Int64) async throws -> [AuditActivityCount]
}

/// The applied policies, by version.
public protocol PolicyStore: Sendable {
    /// The newest applied policy's version (0 when none was applied): cheap, polled by every node.
    func latestPolicyVersion() async throws -> Int64
    /// The newest applied policy, if any.
    func latestPolicy() async throws -> StoredPolicy?
    /// Stores a newly applied policy; throws ``StoreError/duplicate`` when its version exists (another operator
    /// applied one meanwhile).
    func insertPolicy(_ policy: StoredPolicy) async throws
}

/// Client assertions already used (replay refused by every node).
public protocol UsedAssertionStore: Sendable {
    /// Records a client assertion (by its digest) as used until `expiresAt` (epoch ms), for every node sharing the
    /// store: `true` the first time, `false` when it was recorded before — an assertion caught on the way is refused
    /// by every node, not only by the one that saw it. Records whose expiry lies more than
    /// ``UsedAssertionRecords/sweepMargin`` before `now` are dropped on the way (a few at a time).
    func consumeAssertion(digest: String, expiresAt: Int64, now: Int64) async throws -> Bool
}

/// How long the stores keep used assertions' records.
public enum UsedAssertionRecords {
    /// A record outlives its assertion's expiry by this much (ms) before it is dropped: nodes whose clocks differ by
    /// less never drop a record another node would still need.
    public static let sweepMargin: Int64 = 300_000
    /// The most records one call drops.
    public static let sweepBatch = 100
}
