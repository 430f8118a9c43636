import GatehouseProtocol
import Foundation
import Logging
import PostgresNIO

/// The schema, in versions applied in order under an advisory lock.
extension PostgresStore {

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
        ("v4", [
            "CREATE TABLE policies (version BIGINT PRIMARY KEY, record TEXT NOT NULL)",
        ]),
        // A round's writes in one statement, so one round trip: every write applies or none. A stale version raises
        // `GH409` inside an inner block whose savepoint undoes the writes before it; the function then returns 0
        // (no error reaches the client: a conflict is an answer, not a failure).
        ("v5", [
            """
            CREATE FUNCTION gatehouse_commit(p_client TEXT, p_names TEXT[], p_data BYTEA[], p_expected BIGINT[]) RETURNS INTEGER
            LANGUAGE plpgsql AS $$
            DECLARE
                changed INTEGER;
            BEGIN
                BEGIN
                    FOR i IN 1 .. coalesce(array_length(p_names, 1), 0) LOOP
                        IF p_expected[i] = 0 THEN
                            INSERT INTO client_states (client_id, name, data, version) VALUES (p_client, p_names[i], p_data[i], 1)
                            ON CONFLICT DO NOTHING;
                        ELSE
                            UPDATE client_states SET data = p_data[i], version = version + 1
                            WHERE client_id = p_client AND name = p_names[i] AND version = p_expected[i];
                        END IF;
                        GET DIAGNOSTICS changed = ROW_COUNT;
                        IF changed <> 1 THEN
                            RAISE EXCEPTION 'stale client state' USING ERRCODE = 'GH409';
                        END IF;
                    END LOOP;
                EXCEPTION WHEN SQLSTATE 'GH409' THEN
                    RETURN 0;
                END;
                RETURN coalesce(array_length(p_names, 1), 0);
            END
            $$
            """,
        ]),
        // Client assertions used, shared by the nodes (`consumeAssertion`).
        ("v6", [
            "CREATE TABLE used_assertions (digest TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
            "CREATE INDEX used_assertions_by_expiry ON used_assertions (expires_at)",
        ]),
        // Devices: the display name searched by operators, and the holds on devices (status, blocked applications).
        ("v7", [
            "ALTER TABLE registrations ADD COLUMN device_name TEXT",
            "UPDATE registrations SET device_name = record::jsonb -> 'data' -> 'device' ->> 'deviceDisplayName'",
            "CREATE INDEX registrations_by_device_name ON registrations (device_name, client_id)",
            "CREATE TABLE device_access (device_id TEXT PRIMARY KEY, record TEXT NOT NULL)",
        ]),
        // Users' enrolled factors (TOTP secrets and recovery codes), versioned for compare-and-set.
        ("v8", [
            """
            CREATE TABLE user_factors (
                username TEXT NOT NULL, factor TEXT NOT NULL, data TEXT NOT NULL, enrolled_at BIGINT NOT NULL, version BIGINT NOT NULL,
                PRIMARY KEY (username, factor))
            """,
        ]),
    ]

    /// The advisory lock key that serializes migrations of one database ("gatehouse" in ASCII, truncated).
    static let migrationLockKey: Int64 = 0x6761_7465_686F_7573

    /// Applies the migrations not yet recorded, all in one transaction under the migration lock.
    func migrate() async throws {
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
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(EpochTime.nowMillis()))",
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
}
