import Foundation
import GRDB
public import GatehouseChecks
public import GatehouseStore

extension SQLiteStore {
    public func accountFailures(_ account: String) async throws -> AccountFailureRecord? {
        let found = try await readingWithWrites { db -> (String, Int64)? in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT record, version FROM account_failures WHERE account = ?"), arguments: [account])
                .map { ($0["record"], $0["version"]) }
        }
        guard let (text, version) = found else { return nil }
        return AccountFailureRecord(account: account, state: try decode(AccountFailureState.self, text), version: version)
    }

    public func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool {
        let text = try encode(state)
        return try await writing { db in
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
        try await writing { db in try db.execute(sql: "DELETE FROM account_failures WHERE account = ?", arguments: [account]) }
    }

    public func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord] {
        let rows = try await reading { db -> [(String, String, Int64)] in
            try Row.fetchAll(db, sql: "SELECT account, record, version FROM account_failures WHERE locked_until > ? ORDER BY account LIMIT ?",
                             arguments: [now, limit]).map { ($0["account"], $0["record"], $0["version"]) }
        }
        return try rows.map { account, text, version in
            AccountFailureRecord(account: account, state: try decode(AccountFailureState.self, text), version: version)
        }
    }
}
