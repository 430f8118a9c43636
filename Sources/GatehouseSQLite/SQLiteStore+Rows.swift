import Foundation
import GRDB
public import GatehouseStore

/// The store's tables row by row, for `gatehouse store copy` (``StoreCopy``).
extension SQLiteStore: StoreRowAccess {
    public var rowsLocation: String { pool.path }

    public func rows(of table: StoreTable, after key: [StoreValue]?, limit: Int) async throws -> [[StoreValue]] {
        let columns = table.columns.map(\.name).joined(separator: ", ")
        let keys = table.keyColumns.map(\.name)
        var sql = "SELECT \(columns) FROM \(table.name)"
        var arguments = StatementArguments()
        if let key {
            sql += " WHERE (\(keys.joined(separator: ", "))) > (\(databaseQuestionMarks(count: keys.count)))"
            arguments += StatementArguments(key.map(Self.databaseValue))
        }
        sql += " ORDER BY \(keys.joined(separator: ", ")) LIMIT ?"
        arguments += [limit]
        return try await reading { [sql, arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { Self.values(of: $0, table) }
        }
    }

    public func row(of table: StoreTable, key: [StoreValue]) async throws -> [StoreValue]? {
        let condition = table.keyColumns.map { "\($0.name) = ?" }.joined(separator: " AND ")
        let sql = "SELECT \(table.columns.map(\.name).joined(separator: ", ")) FROM \(table.name) WHERE \(condition)"
        let arguments = StatementArguments(key.map(Self.databaseValue))
        return try await reading { db in try Row.fetchOne(db, sql: sql, arguments: arguments).map { Self.values(of: $0, table) } }
    }

    public func insert(_ rows: [[StoreValue]], into table: StoreTable) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        let columns = table.columns.map(\.name)
        let sql = "INSERT OR IGNORE INTO \(table.name) (\(columns.joined(separator: ", "))) VALUES (\(databaseQuestionMarks(count: columns.count)))"
        let arguments = rows.map { StatementArguments($0.map(Self.databaseValue)) }
        return try await writing { db in
            let statement = try db.makeStatement(sql: sql)
            var inserted = 0
            for row in arguments {
                try statement.execute(arguments: row)
                inserted += db.changesCount
            }
            return inserted
        }
    }

    public func count(of table: StoreTable) async throws -> Int {
        try await reading { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0 }
    }

    /// Nothing to do: SQLite's `AUTOINCREMENT` continues after the highest key inserted.
    public func finishCopy() async throws {}

    private static func databaseValue(_ value: StoreValue) -> DatabaseValue {
        switch value {
        case .text(let text): text.databaseValue
        case .integer(let number): number.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        case .null: .null
        }
    }

    private static func values(of row: Row, _ table: StoreTable) -> [StoreValue] {
        table.columns.enumerated().map { index, column in
            let value: DatabaseValue = row[index]
            if value.isNull { return .null }
            switch column.kind {
            case .text: return String.fromDatabaseValue(value).map(StoreValue.text) ?? .null
            case .integer: return Int64.fromDatabaseValue(value).map(StoreValue.integer) ?? .null
            case .blob: return Data.fromDatabaseValue(value).map { .blob([UInt8]($0)) } ?? .null
            }
        }
    }
}

/// Backups of the embedded store.
extension SQLiteStore {
    /// Writes a consistent copy of the whole database to a new file at `path` (SQLite's online backup: the store
    /// keeps serving meanwhile, and the copy is one moment's state). Refuses a path that exists.
    public func backup(to path: String) async throws {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreCopy.Failure(description: "\(path) exists already") }
        let destination = try DatabaseQueue(path: path)
        // In one read transaction of the pool: the WAL snapshot of that moment, whatever is written meanwhile.
        try await reading { db in try destination.writeWithoutTransaction { try db.backup(to: $0) } }
        try destination.close()
    }
}
