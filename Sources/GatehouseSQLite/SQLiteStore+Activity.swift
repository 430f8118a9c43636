import GRDB
public import GatehouseStore

extension SQLiteStore {
    // MARK: Activity (the console's chart)

    /// Audit events from `since` (epoch ms, inclusive) to `until` (exclusive), counted by bucket of `bucketMillis`
    /// and by kind, in one grouped query over the `time` index (the kind read from the stored record).
    public func auditActivity(since: Int64, until: Int64, bucketMillis: Int64) async throws -> [AuditActivityCount] {
        let width = max(bucketMillis, 1)
        return try await reading { db in
            try Row.fetchAll(db, sql: """
                SELECT (time - ?) / ? AS bucket, json_extract(record, '$.event') AS event, COUNT(*) AS count
                FROM audit_events WHERE time >= ? AND time < ?
                GROUP BY bucket, event ORDER BY bucket, event
                """, arguments: [since, width, since, until]).compactMap { row in
                guard let event: String = row["event"] else { return nil }
                return AuditActivityCount(bucket: row["bucket"], event: event, count: row["count"])
            }
        }
    }
}
