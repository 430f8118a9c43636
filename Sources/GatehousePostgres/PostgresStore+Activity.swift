public import GatehouseStore
import PostgresNIO

extension PostgresStore {
    // MARK: Activity (the console's chart)

    /// Audit events from `since` (epoch ms, inclusive) to `until` (exclusive), counted by bucket of `bucketMillis`
    /// and by kind, in one grouped query over the `time` index (the kind read from the stored record).
    public func auditActivity(since: Int64, until: Int64, bucketMillis: Int64) async throws -> [AuditActivityCount] {
        let width = max(bucketMillis, 1)
        var result: [AuditActivityCount] = []
        let rows = try await client.query("""
            SELECT (time - \(since)) / \(width) AS bucket, record::jsonb ->> 'event' AS event, COUNT(*) AS count
            FROM audit_events WHERE time >= \(since) AND time < \(until)
            GROUP BY 1, 2 ORDER BY 1, 2
            """, logger: logger)
        for try await (bucket, event, count) in rows.decode((Int64, String?, Int64).self) {
            guard let event else { continue }
            result.append(AuditActivityCount(bucket: bucket, event: event, count: count))
        }
        return result
    }
}
