import Foundation
import GRDB
public import GatehouseChecks
import GatehouseProtocol
public import GatehouseStore

/// What tokens rest on: authorization codes, signing keys, users, revocations.
extension SQLiteStore {
    // MARK: Codes

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        let text = try encode(code)
        let inserted = try await writing { db in
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE expires_at < ?").execute(arguments: [code.expiresAt - 3_600_000])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO authorization_codes (code_hash, record, expires_at) VALUES (?, ?, ?)")
                .execute(arguments: [code.codeHash, text, code.expiresAt])
            return db.changesCount > 0
        }
        if !inserted { throw StoreError.duplicate }
    }

    public func consumeAssertion(digest: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await writing { db in
            try db.cachedStatement(sql: "DELETE FROM used_assertions WHERE rowid IN (SELECT rowid FROM used_assertions WHERE expires_at < ? LIMIT ?)")
                .execute(arguments: [now - UsedAssertionRecords.sweepMargin, UsedAssertionRecords.sweepBatch])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO used_assertions (digest, expires_at) VALUES (?, ?)").execute(arguments: [digest, expiresAt])
            return db.changesCount > 0
        }
    }

    public func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? {
        let text = try await writing { db in
            try String.fetchOne(db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE code_hash = ? RETURNING record"), arguments: [hash])
        }
        return try text.map { try decode(AuthorizationCodeRecord.self, $0) }
    }

    // MARK: Keys

    public func signingKeys() async throws -> [SigningKeyRecord] {
        let texts = try await reading { db in
            try String.fetchAll(db, sql: "SELECT record FROM signing_keys ORDER BY created_at, kid")
        }
        return try texts.map { try decode(SigningKeyRecord.self, $0) }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let inserted = try await writing { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO signing_keys (kid, record, created_at) VALUES (?, ?, ?)",
                arguments: [key.kid, text, key.createdAt])
            return db.changesCount > 0
        }
        if !inserted { throw StoreError.duplicate }
    }

    public func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        let text = try encode(key)
        // One writer at a time (the write transaction): the check and the insert cannot interleave with another's.
        return try await writing { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM signing_keys") == 0 else { return false }
            try db.execute(
                sql: "INSERT INTO signing_keys (kid, record, created_at) VALUES (?, ?, ?)", arguments: [key.kid, text, key.createdAt])
            return true
        }
    }

    public func updateSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        try await writing { db in
            try db.execute(sql: "UPDATE signing_keys SET record = ? WHERE kid = ?", arguments: [text, key.kid])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    // MARK: Users

    public func upsertUser(_ user: UserRecord) async throws {
        let text = try encode(user)
        try await writing { db in
            try db.execute(
                sql: "INSERT INTO users (username, record) VALUES (?, ?) ON CONFLICT(username) DO UPDATE SET record = excluded.record",
                arguments: [user.username, text])
        }
    }

    public func user(named username: String) async throws -> UserRecord? {
        let text = try await readingWithWrites { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT record FROM users WHERE username = ?"), arguments: [username])
        }
        return try text.map { try decode(UserRecord.self, $0) }
    }

    // MARK: Revocations

    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        let text = try encode(revocation)
        try await writing { db in
            try db.execute(sql: "INSERT INTO revocations (record, revoked_at) VALUES (?, ?)", arguments: [text, revocation.revokedAt])
        }
    }

    public func revocations(since: Int64) async throws -> [RevocationRecord] {
        let texts = try await reading { db in
            try String.fetchAll(db, sql: "SELECT record FROM revocations WHERE revoked_at >= ? ORDER BY revoked_at, id", arguments: [since])
        }
        return try texts.map { try decode(RevocationRecord.self, $0) }
    }
}
