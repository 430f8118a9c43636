import Foundation
import GRDB
import GatehouseChecks
import GatehouseStore

extension SQLiteStore {
    public func accountFailures(_ account: String) async throws -> AccountFailureRecord? {
        let row = try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT record, version FROM account_failures WHERE account = ?", arguments: [account])
        }
        guard let row else { return nil }
        let text: String = row["record"]
        return AccountFailureRecord(account: account, state: try decode(AccountFailureState.self, text), version: row["version"])
    }

    public func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool {
        let text = try encode(state)
        return try await pool.write { db in
            if expectedVersion == 0 {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO account_failures (account, record, locked_until, version) VALUES (?, ?, ?, 1)",
                    arguments: [account, text, state.lockedUntil])
            } else {
                try db.execute(
                    sql: "UPDATE account_failures SET record = ?, locked_until = ?, version = version + 1 WHERE account = ? AND version = ?",
                    arguments: [text, state.lockedUntil, account, expectedVersion])
            }
            return db.changesCount == 1
        }
    }

    public func deleteAccountFailures(_ account: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM account_failures WHERE account = ?", arguments: [account]) }
    }

    public func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord] {
        let rows = try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT account, record, version FROM account_failures WHERE locked_until > ? ORDER BY account LIMIT ?",
                             arguments: [now, limit])
        }
        return try rows.map { row in
            let text: String = row["record"]
            return AccountFailureRecord(account: row["account"], state: try decode(AccountFailureState.self, text), version: row["version"])
        }
    }
}
