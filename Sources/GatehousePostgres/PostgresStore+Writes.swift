import PostgresNIO

extension PostgresStore {
    /// Runs `body` on one pooled connection between `BEGIN` and `COMMIT`: a write is done when PostgreSQL answered its
    /// `COMMIT`, never before. A statement sent alone commits at the end of its exchange, *after* PostgreSQL answered
    /// the statement itself; a server told to stop in between (a restart: `pg_ctl stop`, fast or immediate) sends that
    /// answer, then ends the connection without committing — and a write believed done is lost (the restart drill of
    /// `PostgresFaultTests` lost a registration answered `201`, or an audit event, about once in fifteen runs of ten
    /// restarts before every write went through here). Any failure rolls back; the error is the body's, unchanged.
    func committed<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                // A connection that failed or closed has no transaction left to roll back (PostgreSQL rolls it back
                // when the connection ends), and a query on it is not sent.
                if !Self.connectionEnded(error) { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
    }

    /// Whether `error` says the connection itself is gone (not a statement's failure on a live connection).
    static func connectionEnded(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        return [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed].contains(error.code)
    }

    /// Every row of a prepared statement that writes, committed (``committed(_:)``).
    func written<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        let logger = self.logger
        return try await committed { connection in
            var result: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { result.append(row) }
            return result
        }
    }

    /// Every row of a query that writes, committed (``committed(_:)``).
    @discardableResult
    func written(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let logger = self.logger
        return try await committed { connection in try await connection.query(query, logger: logger).collect() }
    }

    /// The texts of the first column of every row of a query that writes, committed (``committed(_:)``).
    func writtenTexts(_ query: PostgresQuery) async throws -> [String] {
        try await written(query).map { try $0.decode(String.self) }
    }
}
