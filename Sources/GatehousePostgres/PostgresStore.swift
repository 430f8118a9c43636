import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging
import PostgresNIO

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
    /// The connection pool.
    public let client: PostgresClient
    /// Where the store connects, without the password.
    public let location: PostgresLocation
    private let runTask: Task<Void, Never>
    let logger: Logger
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

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

    /// Closes the pool's connections and stops its task. The store answers no more queries.
    public func shutdown() async {
        runTask.cancel()
        await runTask.value
    }

    // MARK: Migrations

    /// Schema versions, applied in order; a version once released never changes.
    static let migrations: [(version: String, statements: [String])] = [
        ("v1", [
            """
            CREATE TABLE registrations (
                client_id TEXT PRIMARY KEY,
                record TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE client_states (
                client_id TEXT NOT NULL,
                name TEXT NOT NULL,
                data BYTEA NOT NULL,
                version BIGINT NOT NULL,
                PRIMARY KEY (client_id, name)
            )
            """,
            """
            CREATE TABLE authorization_codes (
                code_hash TEXT PRIMARY KEY,
                record TEXT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX authorization_codes_by_expiry ON authorization_codes (expires_at)",
            """
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                record TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE users (
                username TEXT PRIMARY KEY,
                record TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE revocations (
                id BIGSERIAL PRIMARY KEY,
                record TEXT NOT NULL,
                revoked_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX revocations_by_time ON revocations (revoked_at)",
        ]),
        ("v2", [
            """
            CREATE TABLE account_failures (
                account TEXT PRIMARY KEY,
                record TEXT NOT NULL,
                locked_until BIGINT NOT NULL,
                version BIGINT NOT NULL
            )
            """,
            "CREATE INDEX account_failures_by_lock ON account_failures (locked_until)",
        ]),
        ("v3", [
            "ALTER TABLE registrations ADD COLUMN application_id TEXT, ADD COLUMN device_id TEXT, ADD COLUMN user_id TEXT",
            """
            UPDATE registrations SET application_id = record::jsonb -> 'data' -> 'application' ->> 'id',
                device_id = record::jsonb -> 'data' -> 'device' ->> 'id'
            """,
            "CREATE INDEX registrations_by_application ON registrations (application_id, client_id)",
            "CREATE INDEX registrations_by_device ON registrations (device_id, client_id)",
            "CREATE INDEX registrations_by_user ON registrations (user_id, client_id)",
            """
            CREATE TABLE audit_events (
                id BIGSERIAL PRIMARY KEY,
                time BIGINT NOT NULL,
                record TEXT NOT NULL
            )
            """,
            "CREATE INDEX audit_events_by_time ON audit_events (time)",
        ]),
    ]

    /// The advisory lock key that serializes migrations of one database ("gatehouse" in ASCII, truncated).
    static let migrationLockKey: Int64 = 0x6761_7465_686F_7573

    /// Applies the migrations not yet recorded, all in one transaction under the migration lock.
    private func migrate() async throws {
        let logger = self.logger
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)",
                    logger: logger)
                var applied = Set<String>()
                for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(String.self) {
                    applied.insert(version)
                }
                for migration in Self.migrations where !applied.contains(migration.version) {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(Self.nowMillis()))",
                        logger: logger)
                    logger.info("Applied PostgreSQL schema migration \(migration.version)")
                }
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// The schema versions applied, in order.
    public func appliedMigrations() async throws -> [String] {
        var versions: [String] = []
        for try await version in try await client.query("SELECT version FROM schema_migrations ORDER BY version").decode(String.self) {
            versions.append(version)
        }
        return versions
    }

    // MARK: Helpers

    private static func nowMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func encode(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    /// The texts of the first column of every row.
    func texts(_ query: PostgresQuery) async throws -> [String] {
        var result: [String] = []
        for try await text in try await client.query(query, logger: logger).decode(String.self) { result.append(text) }
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
        let inserted = try await texts(
            """
            INSERT INTO registrations (client_id, record, application_id, device_id)
            VALUES (\(registration.clientID), \(text), \(registration.data.application.id), \(registration.data.device.id))
            ON CONFLICT DO NOTHING RETURNING client_id
            """)
        if inserted.isEmpty { throw StoreError.duplicate }
    }

    public func updateRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        let updated = try await texts(
            """
            UPDATE registrations SET record = \(text), application_id = \(registration.data.application.id),
                device_id = \(registration.data.device.id)
            WHERE client_id = \(registration.clientID) RETURNING client_id
            """)
        if updated.isEmpty { throw StoreError.notFound }
    }

    public func registration(clientID: String) async throws -> ClientRegistrationRecord? {
        try await texts("SELECT record FROM registrations WHERE client_id = \(clientID)").first
            .map { try decode(ClientRegistrationRecord.self, $0) }
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
        let logger = self.logger
        do {
            return try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    for write in writes {
                        let data = ByteBuffer(bytes: write.data)
                        let rows: PostgresRowSequence
                        if write.expectedVersion == 0 {
                            rows = try await connection.query(
                                """
                                INSERT INTO client_states (client_id, name, data, version) VALUES (\(clientID), \(write.name), \(data), 1)
                                ON CONFLICT DO NOTHING RETURNING version
                                """, logger: logger)
                        } else {
                            rows = try await connection.query(
                                """
                                UPDATE client_states SET data = \(data), version = version + 1
                                WHERE client_id = \(clientID) AND name = \(write.name) AND version = \(write.expectedVersion)
                                RETURNING version
                                """, logger: logger)
                        }
                        if try await rows.collect().count != 1 {
                            try await connection.query("ROLLBACK", logger: logger)
                            return false
                        }
                    }
                    try await connection.query("COMMIT", logger: logger)
                    return true
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch where Self.isConflict(error) {
            logger.debug("Commit of client \(clientID) lost to a concurrent transaction: \(String(reflecting: error))")
            return false
        }
    }

    // MARK: Codes

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        let text = try encode(code)
        try await client.query(
            """
            WITH expired AS (DELETE FROM authorization_codes WHERE expires_at < \(code.expiresAt - 3_600_000))
            INSERT INTO authorization_codes (code_hash, record, expires_at) VALUES (\(code.codeHash), \(text), \(code.expiresAt))
            """, logger: logger
        ).collect()
    }

    public func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? {
        try await texts("DELETE FROM authorization_codes WHERE code_hash = \(hash) RETURNING record").first
            .map { try decode(AuthorizationCodeRecord.self, $0) }
    }

    // MARK: Keys

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await texts("SELECT record FROM signing_keys ORDER BY created_at, kid").map { try decode(SigningKeyRecord.self, $0) }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let inserted = try await texts(
            "INSERT INTO signing_keys (kid, record, created_at) VALUES (\(key.kid), \(text), \(key.createdAt)) ON CONFLICT DO NOTHING RETURNING kid")
        if inserted.isEmpty { throw StoreError.duplicate }
    }

    public func updateSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let updated = try await texts("UPDATE signing_keys SET record = \(text) WHERE kid = \(key.kid) RETURNING kid")
        if updated.isEmpty { throw StoreError.notFound }
    }

    // MARK: Users

    public func upsertUser(_ user: UserRecord) async throws {
        let text = try encode(user)
        try await client.query(
            "INSERT INTO users (username, record) VALUES (\(user.username), \(text)) ON CONFLICT (username) DO UPDATE SET record = excluded.record",
            logger: logger
        ).collect()
    }

    public func user(named username: String) async throws -> UserRecord? {
        try await texts("SELECT record FROM users WHERE username = \(username)").first.map { try decode(UserRecord.self, $0) }
    }

    // MARK: Revocations

    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        let text = try encode(revocation)
        try await client.query(
            "INSERT INTO revocations (record, revoked_at) VALUES (\(text), \(revocation.revokedAt))", logger: logger
        ).collect()
    }

    public func revocations(since: Int64) async throws -> [RevocationRecord] {
        try await texts("SELECT record FROM revocations WHERE revoked_at >= \(since) ORDER BY revoked_at, id")
            .map { try decode(RevocationRecord.self, $0) }
    }
}

/// Runs `body`, failing with ``PostgresStoreError/timeout(_:)`` if it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw PostgresStoreError.timeout(what) }
        return value
    }
}

/// Why the PostgreSQL store could not start.
public enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database URL is not a usable `postgres://` URL.
    case invalidURL(String)
    /// The database did not answer in time.
    case timeout(String)

    public var description: String {
        switch self {
        case .invalidURL(let reason): "invalid PostgreSQL URL: \(reason)"
        case .timeout(let what): "timed out \(what)"
        }
    }
}

/// Where a PostgreSQL database is: `postgres://user:password@host:port/database?option=value&...`
/// (`postgresql://` too; user, password and database percent-decoded).
///
/// Defaults: user `postgres`, port 5432, database = user. Options: `sslmode` (`disable`, `prefer`, `require`,
/// `verify-full`; the default is `prefer` on a loopback host and `require` on any other, so that passwords and
/// tokens never cross a network in clear by omission), `pool_size` (the most connections of this node's pool, 10 by
/// default) and `connect_timeout` (seconds, 10 by default).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode = .prefer
    public var poolSize: Int = 10
    public var connectTimeout: Duration = .seconds(10)

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    public init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw PostgresStoreError.invalidURL("not a URL")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresStoreError.invalidURL("the scheme must be postgres:// or postgresql://, not \(scheme)://")
        }
        guard var host = components.host, !host.isEmpty else { throw PostgresStoreError.invalidURL("no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let username = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw PostgresStoreError.invalidURL("the path must be one database name") }
        self.init(host: host, port: components.port ?? 5432, username: username, password: components.password,
                  database: path.isEmpty ? username : path)
        tls = Self.isLoopback(host) ? .prefer : .require
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": tls = .disable
                case "allow", "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default: throw PostgresStoreError.invalidURL("sslmode must be disable, prefer or require")
                }
            case "pool_size":
                guard let size = Int(value), (1...1000).contains(size) else { throw PostgresStoreError.invalidURL("pool_size must be 1...1000") }
                poolSize = size
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else { throw PostgresStoreError.invalidURL("connect_timeout must be seconds > 0") }
                connectTimeout = .seconds(seconds)
            default:
                throw PostgresStoreError.invalidURL("unknown option '\(item.name)' (known: sslmode, pool_size, connect_timeout)")
            }
        }
    }

    /// Whether `host` is this machine (`localhost`, `127.0.0.0/8`, `::1`).
    static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The URL without the password.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(username)@\(hostPart):\(port)/\(database)"
    }

    /// The same server and credentials, another database.
    public func with(database: String) -> PostgresLocation {
        var copy = self
        copy.database = database
        return copy
    }

    /// The configuration of a single ``PostgresConnection`` to this location.
    public var connectionConfiguration: PostgresConnection.Configuration {
        get throws {
            let tlsConfiguration: PostgresConnection.Configuration.TLS = switch tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: tlsConfiguration)
            configuration.options.connectTimeout = .nanoseconds(Int64(connectTimeout.components.seconds) * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000)
            return configuration
        }
    }

    /// The configuration of a ``PostgresClient`` for this location.
    public var clientConfiguration: PostgresClient.Configuration {
        let tlsConfiguration: PostgresClient.Configuration.TLS = switch tls {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tlsConfiguration)
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }
}
