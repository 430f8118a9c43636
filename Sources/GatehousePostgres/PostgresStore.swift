import Foundation
public import GatehouseChecks
import GatehouseProtocol
public import GatehouseStore
public import Logging
public import PostgresNIO

/// The store on PostgreSQL, shared by several stateless Gatehouse nodes.
///
/// Each node holds its own connection pool (``PostgresClient``). Semantics are those of the SQLite store:
/// - a round's state writes run in one transaction; a piece read at version 0 is inserted with
///   `ON CONFLICT DO NOTHING`, any other is updated `WHERE version = <read version>`; the first write that touches
///   no row rolls the whole transaction back and ``commit(clientID:writes:)`` answers `false`, so a stale round
///   (on this node or another) changes nothing. A deadlock or serialization failure also answers `false`: the
///   service runs the round again;
/// - a code is consumed by `DELETE ... RETURNING`: of concurrent consumers exactly one gets it;
/// - migrations run on ``connect(url:logger:)`` in one transaction holding `pg_advisory_xact_lock`, recorded in
///   `schema_migrations`, so nodes starting together migrate once and never see a half-made schema.
///
/// Start it with ``connect(url:logger:)`` (which runs the pool) and stop it with ``shutdown()``.
public final class PostgresStore: GatehouseStore {
    private let decodedRegistrations = DecodedRegistrations()
    /// The connection pool.
    public let client: PostgresClient
    /// Where the store connects, without the password.
    public let location: PostgresLocation
    private let runTask: Task<Void, Never>
    let logger: Logger

    private init(client: PostgresClient, location: PostgresLocation, runTask: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.location = location
        self.runTask = runTask
        self.logger = logger
    }

    /// Connects to the database of a `postgres://user:password@host:port/database?options` URL (see
    /// ``PostgresLocation``), runs the connection pool and the migrations, and returns the store.
    public static func connect(url: String, logger: Logger = Logger(label: "gatehouse.postgres")) async throws -> PostgresStore {
        try await connect(PostgresLocation(url: url), logger: logger)
    }

    /// Connects to `location`, runs the connection pool and the migrations, and returns the store.
    public static func connect(_ location: PostgresLocation, logger: Logger = Logger(label: "gatehouse.postgres")) async throws -> PostgresStore {
        // One plain connection first: a wrong password or database fails at once with the server's error,
        // where the pool would retry until the timeout.
        try await withDeadline(location.connectTimeout, what: "connecting to \(location)") {
            let probe = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration, id: 0, logger: logger)
            try? await probe.close()
        }
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: logger)
        let runTask = Task { await client.run() }
        let store = PostgresStore(client: client, location: location, runTask: runTask, logger: logger)
        do {
            try await withDeadline(location.connectTimeout, what: "connecting to \(location)") {
                try await store.migrate()
            }
        } catch {
            await store.shutdown()
            throw error
        }
        return store
    }

    /// Connects to `location` (``connect(_:logger:)``), runs `body` with the store, and shuts it down whether `body`
    /// returns or throws: for commands and tools that use a store for one piece of work.
    public static func with<T>(_ location: PostgresLocation, logger: Logger = Logger(label: "gatehouse.postgres"),
                               _ body: (PostgresStore) async throws -> T) async throws -> T {
        let store = try await connect(location, logger: logger)
        do {
            let result = try await body(store)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// Closes the pool's connections and stops its task. The store answers no more queries.
    public func shutdown() async {
        runTask.cancel()
        await runTask.value
    }

    // MARK: Helpers

    func encode(_ value: some Encodable) throws -> String { try StoreCoding.shared.encode(value) }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T { try StoreCoding.shared.decode(type, text) }

    /// The texts of the first column of every row.
    func texts(_ query: PostgresQuery) async throws -> [String] {
        var result: [String] = []
        for try await text in try await client.query(query, logger: logger).decode(String.self) { result.append(text) }
        return result
    }

    /// Every row of a prepared statement that reads (prepared once per connection); a write goes through `written` (committed).
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        var result: [Statement.Row] = []
        for try await row in try await client.execute(statement, logger: logger) { result.append(row) }
        return result
    }

    /// Whether an error means "another transaction won": the round is run again rather than failing.
    static func isConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"  // serialization_failure, deadlock_detected
    }

    // MARK: Registrations

    public func createRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        let inserted = try await written(TextRows<PreparedStatements.InsertRegistration>(
            registration.clientID, text, registration.data.application.id, registration.data.device.id,
            registration.data.device.deviceDisplayName ?? ""))
        if inserted.isEmpty { throw StoreError.duplicate }
        decodedRegistrations.remember(registration, as: text)
    }

    public func updateRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        let updated = try await writtenTexts(
            """
            UPDATE registrations SET record = \(text), application_id = \(registration.data.application.id),
                device_id = \(registration.data.device.id), device_name = \(registration.data.device.deviceDisplayName)
            WHERE client_id = \(registration.clientID) RETURNING client_id
            """)
        if updated.isEmpty { throw StoreError.notFound }
    }

    public func registration(clientID: String) async throws -> ClientRegistrationRecord? {
        try await rows(TextRows<PreparedStatements.Registration>(clientID)).first
            .map { try decodedRegistrations.record($0, clientID: clientID) }
    }

    public func storedClient(clientID: String) async throws -> StoredClient? {
        // One prepared statement, one round trip.
        let rows = try await client.execute(PreparedStatements.StoredClient(clientID: clientID), logger: logger)
        var text: String?
        var device: String?
        var state: [String: VersionedState] = [:]
        for try await (record, name, data, version, access) in rows {
            text = record
            device = access
            if let name, let data, let version { state[name] = VersionedState(data: Array(data.readableBytesView), version: version) }
        }
        guard let text else { return nil }
        return StoredClient(registration: try decodedRegistrations.record(text, clientID: clientID), state: state,
                            device: try device.map { try decode(DeviceAccessRecord.self, $0) })
    }

    // MARK: Client state

    public func clientState(clientID: String) async throws -> [String: VersionedState] {
        var result: [String: VersionedState] = [:]
        let rows = try await client.query("SELECT name, data, version FROM client_states WHERE client_id = \(clientID)", logger: logger)
        for try await (name, data, version) in rows.decode((String, ByteBuffer, Int64).self) {
            result[name] = VersionedState(data: Array(data.readableBytesView), version: version)
        }
        return result
    }

    public func commit(clientID: String, writes: [StateWrite]) async throws -> Bool {
        guard !writes.isEmpty else { return true }
        do {
            // One prepared statement (schema v5's function): all the writes or none, in one round trip; 0 when a
            // version was stale (nothing written).
            let counts = try await written(PreparedStatements.Commit(clientID: clientID, writes: writes))
            return counts.last.map(Int.init) == writes.count
        } catch where Self.isConflict(error) {
            logger.debug("Commit of client \(clientID) lost to a concurrent one: \(String(reflecting: error))")
            return false
        }
    }

    // MARK: Codes

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        let inserted = try await written(TextRows<PreparedStatements.InsertCode>(
            code.expiresAt - 3_600_000, code.codeHash, try encode(code), code.expiresAt))
        if inserted.isEmpty { throw StoreError.duplicate }
    }

    public func consumeAssertion(digest: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        // A few long-expired records dropped, skipping those another node's sweep holds (no waiting on each other's
        // locks, no deadlock between two sweeps); then this one inserted, unless another node (or this one) recorded
        // it first. Two statements, so that the insert sees what the sweep dropped.
        let cutoff = now - UsedAssertionRecords.sweepMargin
        let batch = UsedAssertionRecords.sweepBatch
        try await written(
            """
            DELETE FROM used_assertions WHERE digest IN
                (SELECT digest FROM used_assertions WHERE expires_at < \(cutoff) LIMIT \(batch) FOR UPDATE SKIP LOCKED)
            """)
        let inserted = try await writtenTexts(
            "INSERT INTO used_assertions (digest, expires_at) VALUES (\(digest), \(expiresAt)) ON CONFLICT DO NOTHING RETURNING digest")
        return !inserted.isEmpty
    }

    public func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? {
        try await written(TextRows<PreparedStatements.ConsumeCode>(hash)).first.map { try decode(AuthorizationCodeRecord.self, $0) }
    }

    // MARK: Keys

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await texts("SELECT record FROM signing_keys ORDER BY created_at, kid").map { try decode(SigningKeyRecord.self, $0) }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let inserted = try await writtenTexts(
            "INSERT INTO signing_keys (kid, record, created_at) VALUES (\(key.kid), \(text), \(key.createdAt)) ON CONFLICT DO NOTHING RETURNING kid")
        if inserted.isEmpty { throw StoreError.duplicate }
    }

    public func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        let text = try encode(key)
        let logger = self.logger
        return try await committed { connection in
            // EXCLUSIVE blocks other writers (and this statement on other nodes) until COMMIT; readers go on.
            try await connection.query("LOCK TABLE signing_keys IN EXCLUSIVE MODE", logger: logger)
            return try await connection.query(
                """
                INSERT INTO signing_keys (kid, record, created_at) SELECT \(key.kid), \(text), \(key.createdAt)
                WHERE NOT EXISTS (SELECT 1 FROM signing_keys) RETURNING kid
                """, logger: logger).collect().count == 1
        }
    }

    public func updateSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let updated = try await writtenTexts("UPDATE signing_keys SET record = \(text) WHERE kid = \(key.kid) RETURNING kid")
        if updated.isEmpty { throw StoreError.notFound }
    }

    // MARK: Users

    public func upsertUser(_ user: UserRecord) async throws {
        let text = try encode(user)
        try await written(
            "INSERT INTO users (username, record) VALUES (\(user.username), \(text)) ON CONFLICT (username) DO UPDATE SET record = excluded.record")
    }

    public func user(named username: String) async throws -> UserRecord? {
        try await texts("SELECT record FROM users WHERE username = \(username)").first.map { try decode(UserRecord.self, $0) }
    }

    // MARK: Revocations

    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        let text = try encode(revocation)
        try await written("INSERT INTO revocations (record, revoked_at) VALUES (\(text), \(revocation.revokedAt))")
    }

    public func revocations(since: Int64) async throws -> [RevocationRecord] {
        try await texts("SELECT record FROM revocations WHERE revoked_at >= \(since) ORDER BY revoked_at, id")
            .map { try decode(RevocationRecord.self, $0) }
    }
}
