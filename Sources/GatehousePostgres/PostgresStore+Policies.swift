public import GatehouseStore
import PostgresNIO

extension PostgresStore {
    // MARK: Policies applied through the admin API

    public func latestPolicyVersion() async throws -> Int64 {
        let rows = try await client.query("SELECT COALESCE(MAX(version), 0) FROM policies", logger: logger)
        for try await version in rows.decode(Int64.self) { return version }
        return 0
    }

    public func latestPolicy() async throws -> StoredPolicy? {
        try await texts("SELECT record FROM policies ORDER BY version DESC LIMIT 1").first.map { try decode(StoredPolicy.self, $0) }
    }

    public func insertPolicy(_ policy: StoredPolicy) async throws {
        let text = try encode(policy)
        let inserted = try await writtenTexts(
            "INSERT INTO policies (version, record) VALUES (\(policy.version), \(text)) ON CONFLICT DO NOTHING RETURNING record")
        if inserted.isEmpty { throw StoreError.duplicate }
    }
}
