import Foundation
import GRDB

/// What `gatehouse store restore` puts in place: a backup is verified as Gatehouse's before anything is touched.
extension SQLiteStore {
    /// Why a file is refused as a backup.
    public struct BackupRefusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Verifies that the SQLite file at `path` is a backup of Gatehouse's store and holds nothing else: opened
    /// read-only (nothing is written into it — checking an unrelated file by opening it as a store wrote Gatehouse's
    /// tables into it before), intact (`PRAGMA integrity_check`), with Gatehouse's `registrations` table, and every
    /// schema object one of Gatehouse's own — a table or index by its name, a trigger or view by its name and
    /// definition (a backup carrying a trigger that wiped the audit log was restored with it, and kept; issue 54,
    /// finding 11). An older backup, whose schema is a part of today's, passes: the server migrates it on open.
    public static func verifyBackup(at path: String) throws(BackupRefusal) {
        let expected: [SchemaObject]
        let found: [SchemaObject]
        do {
            let fresh = try DatabaseQueue()
            try migrator.migrate(fresh)
            expected = try fresh.read(SchemaObject.all)
        } catch {
            throw BackupRefusal(description: "Gatehouse's own schema could not be read: \(error)")
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let backup = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? backup.close() }
            found = try backup.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else {
                    throw BackupRefusal(description: "it fails SQLite's integrity check: \(integrity.prefix(3).joined(separator: "; "))")
                }
                return try SchemaObject.all(db)
            }
        } catch let refusal as BackupRefusal {
            throw refusal
        } catch {
            throw BackupRefusal(description: "it is not an SQLite database: \(error)")
        }
        guard found.contains(where: { $0.type == "table" && $0.name == "registrations" }) else {
            throw BackupRefusal(description: "it has no registrations table")
        }
        for object in found where !expected.contains(where: { $0.admits(object) }) {
            throw BackupRefusal(description: "it holds \(object.type) \(object.name.prefix(64)), which Gatehouse's store has not")
        }
    }

    /// One entry of `sqlite_master` (SQLite's own, `sqlite_*`, left out).
    struct SchemaObject: Equatable {
        let type: String
        let name: String
        let sql: String?

        static func all(_ db: Database) throws -> [SchemaObject] {
            try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").map {
                SchemaObject(type: $0["type"], name: $0["name"], sql: $0["sql"])
            }
        }

        /// Whether `other` is this object: a table or index of the same name; a trigger or view (code that runs
        /// or reads) exactly as defined.
        func admits(_ other: SchemaObject) -> Bool {
            guard type == other.type, name == other.name else { return false }
            return type == "table" || type == "index" || sql == other.sql
        }
    }
}
