import GRDB

extension SQLiteStore {
    /// The schema, one migration per version, applied in order when the store opens (GRDB records which ran).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE registrations (
                    client_id TEXT PRIMARY KEY NOT NULL,
                    record TEXT NOT NULL
                );
                CREATE TABLE client_states (
                    client_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    data BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    PRIMARY KEY (client_id, name)
                );
                CREATE TABLE authorization_codes (
                    code_hash TEXT PRIMARY KEY NOT NULL,
                    record TEXT NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                CREATE TABLE signing_keys (
                    kid TEXT PRIMARY KEY NOT NULL,
                    record TEXT NOT NULL,
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE users (
                    username TEXT PRIMARY KEY NOT NULL,
                    record TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-revocations") { db in
            try db.execute(sql: """
                CREATE TABLE revocations (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    record TEXT NOT NULL,
                    revoked_at INTEGER NOT NULL
                );
                CREATE INDEX revocations_by_time ON revocations (revoked_at);
                """)
        }
        migrator.registerMigration("v3-account-failures") { db in
            try db.execute(sql: """
                CREATE TABLE account_failures (
                    account TEXT PRIMARY KEY NOT NULL,
                    record TEXT NOT NULL,
                    locked_until INTEGER NOT NULL,
                    version INTEGER NOT NULL
                );
                CREATE INDEX account_failures_by_lock ON account_failures (locked_until);
                """)
        }
        migrator.registerMigration("v4-admin-audit") { db in
            try db.execute(sql: """
                ALTER TABLE registrations ADD COLUMN application_id TEXT;
                ALTER TABLE registrations ADD COLUMN device_id TEXT;
                ALTER TABLE registrations ADD COLUMN user_id TEXT;
                UPDATE registrations SET application_id = json_extract(record, '$.data.application.id'),
                    device_id = json_extract(record, '$.data.device.id');
                CREATE INDEX registrations_by_application ON registrations (application_id, client_id);
                CREATE INDEX registrations_by_device ON registrations (device_id, client_id);
                CREATE INDEX registrations_by_user ON registrations (user_id, client_id);
                CREATE TABLE audit_events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    time INTEGER NOT NULL,
                    record TEXT NOT NULL
                );
                CREATE INDEX audit_events_by_time ON audit_events (time);
                """)
        }
        migrator.registerMigration("v5-policies") { db in
            try db.execute(sql: "CREATE TABLE policies (version INTEGER PRIMARY KEY, record TEXT NOT NULL)")
        }
        migrator.registerMigration("v6-used-assertions") { db in
            try db.execute(sql: """
                CREATE TABLE used_assertions (digest TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
                CREATE INDEX used_assertions_by_expiry ON used_assertions (expires_at);
                """)
        }
        migrator.registerMigration("v7-devices") { db in
            try db.execute(sql: """
                ALTER TABLE registrations ADD COLUMN device_name TEXT;
                UPDATE registrations SET device_name = json_extract(record, '$.data.device.deviceDisplayName');
                CREATE INDEX registrations_by_device_name ON registrations (device_name, client_id);
                CREATE TABLE device_access (device_id TEXT PRIMARY KEY NOT NULL, record TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("v8-user-factors") { db in
            try db.execute(sql: """
                CREATE TABLE user_factors (
                    username TEXT NOT NULL, factor TEXT NOT NULL, data TEXT NOT NULL, enrolled_at INTEGER NOT NULL, version INTEGER NOT NULL,
                    PRIMARY KEY (username, factor));
                """)
        }
        return migrator
    }
}
