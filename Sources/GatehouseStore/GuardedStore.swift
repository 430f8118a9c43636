public import GatehouseChecks

/// A store whose every call has a deadline and whose database outages are ``StoreUnavailable``: what a server
/// puts in front of its store, so that no request waits on a frozen or restarting database longer than `deadline`
/// and every outage is answered `503` (its base store names its own database's errors: ``StoreOutages/outage(_:)``).
public final class GuardedStore: GatehouseStore {
    /// The store it guards.
    public let base: any GatehouseStore
    /// How long one call may take.
    public let deadline: Duration

    public init(_ base: any GatehouseStore, deadline: Duration) {
        self.base = base
        self.deadline = deadline
    }

    public func outage(_ error: any Error) -> StoreUnavailable? { base.outage(error) }

    /// `operation` within the deadline; an outage of the base store's rethrown as ``StoreUnavailable``.
    private func guarded<T: Sendable>(_ what: StaticString, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            return try await withStoreDeadline(deadline, "the store's \(what)", operation)
        } catch {
            if let outage = base.outage(error) { throw outage }
            throw error
        }
    }

    public func createRegistration(_ registration: ClientRegistrationRecord) async throws { try await guarded("createRegistration") { [base] in try await base.createRegistration(registration) } }
    public func updateRegistration(_ registration: ClientRegistrationRecord) async throws { try await guarded("updateRegistration") { [base] in try await base.updateRegistration(registration) } }
    public func registration(clientID: String) async throws -> ClientRegistrationRecord? { try await guarded("registration") { [base] in try await base.registration(clientID: clientID) } }
    public func registrations(_ query: RegistrationQuery) async throws -> [RegistrationListing] { try await guarded("registrations") { [base] in try await base.registrations(query) } }
    public func applicationVersions(limit: Int) async throws -> [ApplicationVersionCount] { try await guarded("applicationVersions") { [base] in try await base.applicationVersions(limit: limit) } }
    public func setActiveUser(clientID: String, userID: String?) async throws { try await guarded("setActiveUser") { [base] in try await base.setActiveUser(clientID: clientID, userID: userID) } }
    public func deleteRegistration(clientID: String) async throws -> Bool { try await guarded("deleteRegistration") { [base] in try await base.deleteRegistration(clientID: clientID) } }
    public func userFactor(username: String, factor: String) async throws -> UserFactorRecord? { try await guarded("userFactor") { [base] in try await base.userFactor(username: username, factor: factor) } }
    public func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool { try await guarded("saveUserFactor") { [base] in try await base.saveUserFactor(record, expectedVersion: expectedVersion) } }
    public func userFactors(username: String) async throws -> [UserFactorRecord] { try await guarded("userFactors") { [base] in try await base.userFactors(username: username) } }
    public func deleteUserFactors(username: String, factor: String?) async throws -> Int { try await guarded("deleteUserFactors") { [base] in try await base.deleteUserFactors(username: username, factor: factor) } }
    public func deviceAccess(deviceIDs: [String]) async throws -> [DeviceAccessRecord] { try await guarded("deviceAccess") { [base] in try await base.deviceAccess(deviceIDs: deviceIDs) } }
    public func saveDeviceAccess(_ record: DeviceAccessRecord) async throws { try await guarded("saveDeviceAccess") { [base] in try await base.saveDeviceAccess(record) } }
    public func deleteDevice(deviceID: String) async throws -> [String] { try await guarded("deleteDevice") { [base] in try await base.deleteDevice(deviceID: deviceID) } }
    public func clientState(clientID: String) async throws -> [String: VersionedState] { try await guarded("clientState") { [base] in try await base.clientState(clientID: clientID) } }
    public func storedClient(clientID: String) async throws -> StoredClient? { try await guarded("storedClient") { [base] in try await base.storedClient(clientID: clientID) } }
    public func commit(clientID: String, writes: [StateWrite]) async throws -> Bool { try await guarded("commit") { [base] in try await base.commit(clientID: clientID, writes: writes) } }
    public func insertCode(_ code: AuthorizationCodeRecord) async throws { try await guarded("insertCode") { [base] in try await base.insertCode(code) } }
    public func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? { try await guarded("consumeCode") { [base] in try await base.consumeCode(hash: hash) } }
    public func signingKeys() async throws -> [SigningKeyRecord] { try await guarded("signingKeys") { [base] in try await base.signingKeys() } }
    public func insertSigningKey(_ key: SigningKeyRecord) async throws { try await guarded("insertSigningKey") { [base] in try await base.insertSigningKey(key) } }
    public func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool { try await guarded("insertFirstSigningKey") { [base] in try await base.insertFirstSigningKey(key) } }
    public func updateSigningKey(_ key: SigningKeyRecord) async throws { try await guarded("updateSigningKey") { [base] in try await base.updateSigningKey(key) } }
    public func upsertUser(_ user: UserRecord) async throws { try await guarded("upsertUser") { [base] in try await base.upsertUser(user) } }
    public func insertRevocation(_ revocation: RevocationRecord) async throws { try await guarded("insertRevocation") { [base] in try await base.insertRevocation(revocation) } }
    public func revocations(since: Int64) async throws -> [RevocationRecord] { try await guarded("revocations") { [base] in try await base.revocations(since: since) } }
    public func accountFailures(_ account: String) async throws -> AccountFailureRecord? { try await guarded("accountFailures") { [base] in try await base.accountFailures(account) } }
    public func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool { try await guarded("saveAccountFailures") { [base] in try await base.saveAccountFailures(account, state: state, expectedVersion: expectedVersion) } }
    public func deleteAccountFailures(_ account: String) async throws { try await guarded("deleteAccountFailures") { [base] in try await base.deleteAccountFailures(account) } }
    public func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord] { try await guarded("lockedAccounts") { [base] in try await base.lockedAccounts(now: now, limit: limit) } }
    public func appendAudit(_ events: [AuditEvent]) async throws { try await guarded("appendAudit") { [base] in try await base.appendAudit(events) } }
    public func auditEvents(after: Int64, limit: Int) async throws -> [AuditEvent] { try await guarded("auditEvents") { [base] in try await base.auditEvents(after: after, limit: limit) } }
    public func deleteAudit(before time: Int64) async throws -> Int { try await guarded("deleteAudit") { [base] in try await base.deleteAudit(before: time) } }
    public func auditActivity(since: Int64, until: Int64, bucketMillis: Int64) async throws -> [AuditActivityCount] { try await guarded("auditActivity") { [base] in try await base.auditActivity(since: since, until: until, bucketMillis: bucketMillis) } }
    public func latestPolicyVersion() async throws -> Int64 { try await guarded("latestPolicyVersion") { [base] in try await base.latestPolicyVersion() } }
    public func latestPolicy() async throws -> StoredPolicy? { try await guarded("latestPolicy") { [base] in try await base.latestPolicy() } }
    public func insertPolicy(_ policy: StoredPolicy) async throws { try await guarded("insertPolicy") { [base] in try await base.insertPolicy(policy) } }
    public func consumeAssertion(digest: String, expiresAt: Int64, now: Int64) async throws -> Bool { try await guarded("consumeAssertion") { [base] in try await base.consumeAssertion(digest: digest, expiresAt: expiresAt, now: now) } }
    public func user(named username: String) async throws -> UserRecord? { try await guarded("user") { [base] in try await base.user(named: username) } }
}
