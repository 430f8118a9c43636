import GRDB
public import GatehouseChecks
import GatehouseStore

/// Users' enrolled factors (``UserFactorStore``): one row per user and check, written by compare-and-set on its version.
extension SQLiteStore {
    public func userFactor(username: String, factor: String) async throws -> UserFactorRecord? {
        try await readingWithWrites { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT data, enrolled_at, version FROM user_factors WHERE username = ? AND factor = ?"),
                             arguments: [username, factor])
                .map { UserFactorRecord(username: username, factor: factor, data: $0["data"], enrolledAt: $0["enrolled_at"], version: $0["version"]) }
        }
    }

    public func saveUserFactor(_ record: UserFactorRecord, expectedVersion: Int64) async throws -> Bool {
        try await writing { db in
            if expectedVersion == 0 {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO user_factors (username, factor, data, enrolled_at, version) VALUES (?, ?, ?, ?, 1)",
                    arguments: [record.username, record.factor, record.data, record.enrolledAt])
            } else {
                try db.execute(
                    sql: "UPDATE user_factors SET data = ?, version = version + 1 WHERE username = ? AND factor = ? AND version = ?",
                    arguments: [record.data, record.username, record.factor, expectedVersion])
            }
            return db.changesCount == 1
        }
    }

    public func userFactors(username: String) async throws -> [UserFactorRecord] {
        try await reading { db in
            try Row.fetchAll(db, sql: "SELECT factor, data, enrolled_at, version FROM user_factors WHERE username = ? ORDER BY factor",
                             arguments: [username])
                .map { UserFactorRecord(username: username, factor: $0["factor"], data: $0["data"], enrolledAt: $0["enrolled_at"], version: $0["version"]) }
        }
    }

    public func deleteUserFactors(username: String, factor: String?) async throws -> Int {
        try await writing { db in
            if let factor {
                try db.execute(sql: "DELETE FROM user_factors WHERE username = ? AND factor = ?", arguments: [username, factor])
            } else {
                try db.execute(sql: "DELETE FROM user_factors WHERE username = ?", arguments: [username])
            }
            return db.changesCount
        }
    }
}
