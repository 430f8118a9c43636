/// Copies every table of one store into another (``StoreTable/copied``), for moving a deployment from the embedded
/// SQLite store to PostgreSQL (or back) without any client registering again: registrations with their keys, check
/// states (blocks, remember-me), signing keys (tokens issued before still verify), policy versions, users, lockout
/// counters, revocations, device holds, used assertions and the audit log.
///
/// Rows are read in key order, a page at a time, and inserted leaving any row the target has already: a copy that
/// was interrupted is run again to finish it, and copies nothing twice. A row changed in the source after it was
/// copied is not copied again — copy from a stopped source, or from a backup (`gatehouse store backup`, consistent
/// while the source serves). Afterwards the counts of both sides are compared, and a sample of rows read back.
public struct StoreCopy: Sendable {
    /// What one table's copy did.
    public struct TableReport: Sendable, Equatable {
        public let table: String
        /// Rows read from the source.
        public let read: Int
        /// Rows the target did not have.
        public let inserted: Int
        /// The rows each side has after the copy.
        public let sourceCount: Int
        public let targetCount: Int
        /// Source rows read back from the target and compared, and those that differed.
        public let sampled: Int
        public let differing: Int
    }

    /// Why a copy stopped.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String

        package init(description: String) { self.description = description }
    }

    let source: any StoreRowAccess
    let target: any StoreRowAccess
    /// Rows per page (per read and per insert transaction).
    let pageSize: Int
    /// Rows compared per table after the copy, spread over the table.
    let sampleSize: Int

    public init(from source: any StoreRowAccess, to target: any StoreRowAccess, pageSize: Int = 500, sampleSize: Int = 100) {
        self.source = source
        self.target = target
        self.pageSize = max(pageSize, 1)
        self.sampleSize = max(sampleSize, 0)
    }

    /// The tables of the target that hold rows already (a store no server has run on has none).
    public func nonEmptyTargetTables() async throws -> [String] {
        var tables: [String] = []
        for table in StoreTable.copied where try await target.count(of: table) > 0 { tables.append(table.name) }
        return tables
    }

    /// Copies every table, then checks: throws ``Failure`` when a table has fewer rows in the target than in the
    /// source, or a sampled row differs. `progress` is told each table's report as it is done.
    @discardableResult
    public func run(progress: @Sendable (TableReport) -> Void = { _ in }) async throws -> [TableReport] {
        var reports: [TableReport] = []
        for table in StoreTable.copied {
            var read = 0, inserted = 0
            var after: [StoreValue]?
            var sample: [[StoreValue]] = []
            let sourceCount = try await source.count(of: table)
            // Every n-th row is kept for the comparison, so that the sample spans the table.
            let stride = max(sourceCount / max(sampleSize, 1), 1)
            while true {
                let page = try await source.rows(of: table, after: after, limit: pageSize)
                if page.isEmpty { break }
                inserted += try await target.insert(page, into: table)
                for (index, row) in page.enumerated() where (read + index) % stride == 0 && sample.count < sampleSize { sample.append(row) }
                read += page.count
                after = Array(page[page.count - 1].prefix(table.keyCount))
                if page.count < pageSize { break }
            }
            var differing = 0
            for row in sample where try await target.row(of: table, key: Array(row.prefix(table.keyCount))) != row { differing += 1 }
            let report = TableReport(table: table.name, read: read, inserted: inserted, sourceCount: try await source.count(of: table),
                                     targetCount: try await target.count(of: table), sampled: sample.count, differing: differing)
            progress(report)
            reports.append(report)
        }
        try await target.finishCopy()
        let short = reports.filter { $0.targetCount < $0.read }
        if !short.isEmpty {
            throw Failure(description: "the target has fewer rows than were copied in " + short.map { "\($0.table) (\($0.targetCount) of \($0.read))" }.joined(separator: ", "))
        }
        let changed = reports.filter { $0.differing > 0 }
        if !changed.isEmpty {
            throw Failure(description: "rows differ between the source and the target in " + changed.map { "\($0.table) (\($0.differing) of \($0.sampled) compared)" }.joined(separator: ", ")
                          + ": the target held other versions of them (copy into an empty target), or the source changed during the copy (copy from a stopped source or a backup)")
        }
        return reports
    }
}
