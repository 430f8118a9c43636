import GRDB
public import GatehouseStore

extension SQLiteStore {
    // MARK: Policies applied through the admin API

    public func latestPolicyVersion() async throws -> Int64 {
        try await reading { db in try Int64.fetchOne(db, sql: "SELECT MAX(version) FROM policies") ?? 0 }
    }

    public func latestPolicy() async throws -> StoredPolicy? {
        let text = try await reading { db in
            try String.fetchOne(db, sql: "SELECT record FROM policies ORDER BY version DESC LIMIT 1")
        }
        return try text.map { try decode(StoredPolicy.self, $0) }
    }

    public func insertPolicy(_ policy: StoredPolicy) async throws {
        let text = try encode(policy)
        let inserted = try await writing { db in
            try db.execute(sql: "INSERT OR IGNORE INTO policies (version, record) VALUES (?, ?)", arguments: [policy.version, text])
            return db.changesCount > 0
        }
        if !inserted { throw StoreError.duplicate }
    }
}
