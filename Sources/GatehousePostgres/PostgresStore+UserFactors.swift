public import GatehouseChecks
import GatehouseStore
import PostgresNIO

/// Users' enrolled factors (``UserFactorStore``): one row per user and check, written by compare-and-set on its version.
extension PostgresStore {
    public func userFactor(username: String, factor: String) async throws -> UserFactorRecord? {
        let rows = try await client.query(
            "SELECT data, enrolled_at, version FROM user_factors WHERE username = \(username) AND factor = \(factor)", logger: logger)
        for try await (data, enrolledAt, version) in rows.decode((String, Int64, Int64).self) {
            return UserFactorRecord(username: username, factor: factor, data: data, enrolledAt: enrolledAt, version: version)
        }
        return nil
    }

    public func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool {
        let written: [String]
        if expectedVersion == 0 {
            written = try await writtenTexts("""
                INSERT INTO user_factors (username, factor, data, enrolled_at, version)
                VALUES (\(record.username), \(record.factor), \(record.data), \(record.enrolledAt), 1)
                ON CONFLICT DO NOTHING RETURNING username
                """)
        } else {
            written = try await writtenTexts("""
                UPDATE user_factors SET data = \(record.data), version = version + 1
                WHERE username = \(record.username) AND factor = \(record.factor) AND version = \(expectedVersion) RETURNING username
                """)
        }
        return written.count == 1
    }

    public func userFactors(username: String) async throws -> [UserFactorRecord] {
        let rows = try await client.query(
            "SELECT factor, data, enrolled_at, version FROM user_factors WHERE username = \(username) ORDER BY factor", logger: logger)
        var result: [UserFactorRecord] = []
        for try await (factor, data, enrolledAt, version) in rows.decode((String, String, Int64, Int64).self) {
            result.append(UserFactorRecord(username: username, factor: factor, data: data, enrolledAt: enrolledAt, version: version))
        }
        return result
    }

    public func deleteUserFactors(username: String, factor: String?) async throws -> Int {
        let deleted: [String]
        if let factor {
            deleted = try await writtenTexts("DELETE FROM user_factors WHERE username = \(username) AND factor = \(factor) RETURNING factor")
        } else {
            deleted = try await writtenTexts("DELETE FROM user_factors WHERE username = \(username) RETURNING factor")
        }
        return deleted.count
    }
}
