public import GatehouseChecks
public import GatehouseStore
import PostgresNIO

extension PostgresStore {
    public func accountFailures(_ account: String) async throws -> AccountFailureRecord? {
        let rows = try await client.query("SELECT record, version FROM account_failures WHERE account = \(account)", logger: logger)
        for try await (text, version) in rows.decode((String, Int64).self) {
            return AccountFailureRecord(account: account, state: try decode(AccountFailureState.self, text), version: version)
        }
        return nil
    }

    public func saveAccountFailures(_ account: String, state: AccountFailureState, expectedVersion: Int64) async throws -> Bool {
        let text = try encode(state)
        let written: [String]
        if expectedVersion == 0 {
            written = try await writtenTexts(
                """
                INSERT INTO account_failures (account, record, locked_until, version) VALUES (\(account), \(text), \(state.lockedUntil), 1)
                ON CONFLICT DO NOTHING RETURNING account
                """)
        } else {
            written = try await writtenTexts(
                """
                UPDATE account_failures SET record = \(text), locked_until = \(state.lockedUntil), version = version + 1
                WHERE account = \(account) AND version = \(expectedVersion) RETURNING account
                """)
        }
        return written.count == 1
    }

    public func deleteAccountFailures(_ account: String) async throws {
        try await written("DELETE FROM account_failures WHERE account = \(account)")
    }

    public func lockedAccounts(now: Int64, limit: Int) async throws -> [AccountFailureRecord] {
        var result: [AccountFailureRecord] = []
        let rows = try await client.query(
            "SELECT account, record, version FROM account_failures WHERE locked_until > \(now) ORDER BY account LIMIT \(limit)", logger: logger)
        for try await (account, text, version) in rows.decode((String, String, Int64).self) {
            result.append(AccountFailureRecord(account: account, state: try decode(AccountFailureState.self, text), version: version))
        }
        return result
    }
}
