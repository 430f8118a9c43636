import GatehouseChecks
import GatehouseHTTP
import GatehouseStore
import Metrics

/// A store that times every operation of the store it wraps and counts its errors and conflicts, into the server's
/// metrics: `gatehouse_store_operation_duration_seconds{operation}`, `gatehouse_store_errors_total{operation}`
/// and `gatehouse_store_conflicts_total{operation}` (a commit or a lockout update that lost a race with another
/// request or node, or an insert of a key that exists). Behaviour is the wrapped store's, unchanged.
///
/// One line per operation on purpose: each only names the operation and forwards it.
final class MeasuredStore: GatehouseStore {
    let base: any GatehouseStore
    private let metrics: GatehouseMetrics

    init(_ base: any GatehouseStore, metrics: GatehouseMetrics) {
        self.base = base
        self.metrics = metrics
    }

    func outage(_ error: any Error) -> StoreUnavailable? { base.outage(error) }

    private func timer(_ operation: String) -> Metrics.Timer {
        metrics.timer("gatehouse_store_operation_duration_seconds", [("operation", operation)])
    }

    private func measure<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        defer {
            timer(operation).record(ContinuousClock.now - start)
        }
        do {
            return try await TracedWork.run("store \(operation)", attributes: ["db.operation.name": .string(operation)], body)
        } catch StoreError.duplicate {
            metrics.counter("gatehouse_store_conflicts_total", [("operation", operation)]).increment()
            throw StoreError.duplicate
        } catch {
            metrics.counter("gatehouse_store_errors_total", [("operation", operation)]).increment()
            throw error
        }
    }

    /// `measure`, counting a `false` answer (a lost compare-and-set) as a conflict.
    private func measureSwap(_ operation: String, _ body: () async throws -> Bool) async throws -> Bool {
        let applied = try await measure(operation, body)
        if !applied { metrics.counter("gatehouse_store_conflicts_total", [("operation", operation)]).increment() }
        return applied
    }

    func createRegistration(_ r: ClientRegistrationRecord) async throws { try await measure("createRegistration") { try await base.createRegistration(r) } }
    func updateRegistration(_ r: ClientRegistrationRecord) async throws { try await measure("updateRegistration") { try await base.updateRegistration(r) } }
    func registration(clientID: String) async throws -> ClientRegistrationRecord? { try await measure("registration") { try await base.registration(clientID: clientID) } }
    func registrations(_ query: RegistrationQuery) async throws -> [RegistrationListing] { try await measure("registrations") { try await base.registrations(query) } }
    func applicationVersions(limit: Int) async throws -> [ApplicationVersionCount] { try await measure("applicationVersions") { try await base.applicationVersions(limit: limit) } }
    func setActiveUser(clientID: String, userID: String?) async throws { try await measure("setActiveUser") { try await base.setActiveUser(clientID: clientID, userID: userID) } }
    func deleteRegistration(clientID: String) async throws -> Bool { try await measure("deleteRegistration") { try await base.deleteRegistration(clientID: clientID) } }
    func userFactor(username: String, factor: String) async throws -> UserFactorRecord? { try await measure("userFactor") { try await base.userFactor(username: username, factor: factor) } }
    func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool { try await measure("saveUserFactor") { try await base.saveUserFactor(record, expectedVersion: expectedVersion) } }
    func userFactors(username: String) async throws -> [UserFactorRecord] { try await measure("userFactors") { try await base.userFactors(username: username) } }
    func deleteUserFactors(username: String, factor: String?) async throws -> Int { try await measure("deleteUserFactors") { try await base.deleteUserFactors(username: username, factor: factor) } }
    func deviceAccess(deviceIDs: [String]) async throws -> [DeviceAccessRecord] { try await measure("deviceAccess") { try await base.deviceAccess(deviceIDs: deviceIDs) } }
    func saveDeviceAccess(_ record: DeviceAccessRecord) async throws { try await measure("saveDeviceAccess") { try await base.saveDeviceAccess(record) } }
    func deleteDevice(deviceID: String) async throws -> [String] { try await measure("deleteDevice") { try await base.deleteDevice(deviceID: deviceID) } }
    func clientState(clientID: String) async throws -> [String: VersionedState] { try await measure("clientState") { try await base.clientState(clientID: clientID) } }
    func storedClient(clientID: String) async throws -> StoredClient? {
        try await measure("storedClient") { try await base.storedClient(clientID: clientID) }
    }
    func commit(clientID: String, writes: [StateWrite]) async throws -> Bool { try await measureSwap("commit") { try await base.commit(clientID: clientID, writes: writes) } }
    func insertCode(_ code: AuthorizationCodeRecord) async throws { try await measure("insertCode") { try await base.insertCode(code) } }
    func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? { try await measure("consumeCode") { try await base.consumeCode(hash: hash) } }
    func signingKeys() async throws -> [SigningKeyRecord] { try await measure("signingKeys") { try await base.signingKeys() } }
    func insertSigningKey(_ key: SigningKeyRecord) async throws { try await measure("insertSigningKey") { try await base.insertSigningKey(key) } }
    func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        try await measure("insertFirstSigningKey") { try await base.insertFirstSigningKey(key) }
    }
    func updateSigningKey(_ key: SigningKeyRecord) async throws { try await measure("updateSigningKey") { try await base.updateSigningKey(key) } }
    func upsertUser(_ user: UserRecord) async throws { try await measure("upsertUser") { try await base.upsertUser(user) } }
    func user(named username: String) async throws -> UserRecord? { try await measure("user") { try await base.user(named: username) } }
    func insertRevocation(_ r: RevocationRecord) async throws { try await measure("insertRevocation") { try await base.insertRevocation(r) } }
    func revocations(since: Int64) async throws -> [RevocationRecord] { try await measure("revocations") { try await base.revocations(since: since) } }
    func accountFailures(_ account: String) async throws -> AccountFailureRecord? { try await measure("accountFailures") { try await base.accountFailures(account) } }
    func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool {
        try await measureSwap("saveAccountFailures") { try await base.saveAccountFailures(account, state: state, expectedVersion: expectedVersion) }
    }
    func deleteAccountFailures(_ account: String) async throws { try await measure("deleteAccountFailures") { try await base.deleteAccountFailures(account) } }
    func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord] { try await measure("lockedAccounts") { try await base.lockedAccounts(now: now, limit: limit) } }
    func appendAudit(_ events: [AuditEvent]) async throws { try await measure("appendAudit") { try await base.appendAudit(events) } }
    func auditEvents(after: Int64, limit: Int) async throws -> [AuditEvent] { try await measure("auditEvents") { try await base.auditEvents(after: after, limit: limit) } }
    @discardableResult
    func deleteAudit(before time: Int64) async throws -> Int { try await measure("deleteAudit") { try await base.deleteAudit(before: time) } }
    func auditActivity(since: Int64, until: Int64, bucketMillis: Int64) async throws -> [AuditActivityCount] {
        try await measure("auditActivity") { try await base.auditActivity(since: since, until: until, bucketMillis: bucketMillis) }
    }
    func latestPolicyVersion() async throws -> Int64 { try await measure("latestPolicyVersion") { try await base.latestPolicyVersion() } }
    func latestPolicy() async throws -> StoredPolicy? { try await measure("latestPolicy") { try await base.latestPolicy() } }
    func insertPolicy(_ policy: StoredPolicy) async throws { try await measure("insertPolicy") { try await base.insertPolicy(policy) } }
    func consumeAssertion(digest: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await measure("consumeAssertion") { try await base.consumeAssertion(digest: digest, expiresAt: expiresAt, now: now) }
    }
}
