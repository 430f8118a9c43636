public import GatehouseStore
import NIOCore
import PostgresNIO

/// The store's tables row by row, for `gatehouse store copy` (``StoreCopy``).
extension PostgresStore: StoreRowAccess {
    public var rowsLocation: String { "\(location)" }

    public func rows(of table: StoreTable, after key: [StoreValue]?, limit: Int) async throws -> [[StoreValue]] {
        var binds = PostgresBindings()
        // Text keys in byte order (COLLATE "C"), as paging needs one order whatever the database's locale.
        let keys = table.keyColumns.map { $0.kind == .text ? "\($0.name) COLLATE \"C\"" : $0.name }
        var sql = "SELECT \(table.columns.map(\.name).joined(separator: ", ")) FROM \(table.name)"
        if let key {
            for value in key { Self.append(value, to: &binds) }
            sql += " WHERE (\(keys.joined(separator: ", "))) > (\((1...key.count).map { "$\($0)" }.joined(separator: ", ")))"
        }
        binds.append(Int64(limit))
        sql += " ORDER BY \(keys.joined(separator: ", ")) LIMIT $\(binds.count)"
        return try await select(PostgresQuery(unsafeSQL: sql, binds: binds), table)
    }

    public func row(of table: StoreTable, key: [StoreValue]) async throws -> [StoreValue]? {
        var binds = PostgresBindings()
        for value in key { Self.append(value, to: &binds) }
        let condition = table.keyColumns.enumerated().map { "\($0.element.name) = $\($0.offset + 1)" }.joined(separator: " AND ")
        let sql = "SELECT \(table.columns.map(\.name).joined(separator: ", ")) FROM \(table.name) WHERE \(condition)"
        return try await select(PostgresQuery(unsafeSQL: sql, binds: binds), table).first
    }

    public func insert(_ rows: [[StoreValue]], into table: StoreTable) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        // One statement for the page (its rows all or none), within PostgreSQL's 65,535 parameters.
        var inserted = 0
        let perStatement = max(60_000 / table.columns.count, 1)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            var binds = PostgresBindings()
            var tuples: [String] = []
            for row in rows[start..<min(start + perStatement, rows.count)] {
                let first = binds.count + 1
                for value in row { Self.append(value, to: &binds) }
                tuples.append("(" + (first..<first + row.count).map { "$\($0)" }.joined(separator: ", ") + ")")
            }
            let sql = "INSERT INTO \(table.name) (\(table.columns.map(\.name).joined(separator: ", "))) VALUES "
                + tuples.joined(separator: ", ") + " ON CONFLICT DO NOTHING RETURNING 1"
            inserted += try await written(PostgresQuery(unsafeSQL: sql, binds: binds)).count
        }
        return inserted
    }

    public func count(of table: StoreTable) async throws -> Int {
        var count: Int64 = 0
        for try await value in try await client.query(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table.name)"), logger: logger)
            .decode(Int64.self) { count = value }
        return Int(count)
    }

    /// Moves each `BIGSERIAL` sequence past the highest copied key, so that new rows never take a copied id.
    public func finishCopy() async throws {
        for table in StoreTable.copied where table.serialKey {
            let key = table.columns[0].name
            try await client.query(PostgresQuery(unsafeSQL: """
                SELECT setval(pg_get_serial_sequence('\(table.name)', '\(key)'), GREATEST((SELECT MAX(\(key)) FROM \(table.name)), 1))
                """), logger: logger).collect()
        }
    }

    private func select(_ query: PostgresQuery, _ table: StoreTable) async throws -> [[StoreValue]] {
        var result: [[StoreValue]] = []
        for try await row in try await client.query(query, logger: logger) {
            var values: [StoreValue] = []
            values.reserveCapacity(table.columns.count)
            for (cell, column) in zip(row, table.columns) {
                switch column.kind {
                case .text: values.append(try cell.decode(String?.self).map(StoreValue.text) ?? .null)
                case .integer: values.append(try cell.decode(Int64?.self).map(StoreValue.integer) ?? .null)
                case .blob: values.append(try cell.decode(ByteBuffer?.self).map { .blob(Array($0.readableBytesView)) } ?? .null)
                }
            }
            result.append(values)
        }
        return result
    }

    private static func append(_ value: StoreValue, to binds: inout PostgresBindings) {
        switch value {
        case .text(let text): binds.append(text)
        case .integer(let number): binds.append(number)
        case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
        case .null: binds.appendNull()
        }
    }
}
