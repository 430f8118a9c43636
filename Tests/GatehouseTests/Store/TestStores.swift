import Foundation
import GatehousePostgres
import GatehouseSQLite
import GatehouseStore
import Logging
import PostgresNIO
import Testing

/// The stores every conformance test runs on.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// Opens a fresh store of each kind for one test and removes it afterwards.
enum TestStores {
    /// Runs `body` with a fresh, empty store of `kind`.
    static func with<T: Sendable>(_ kind: StoreKind, _ body: (any GatehouseStore) async throws -> T) async throws -> T {
        switch kind {
        case .sqlite:
            let directory = TestServer.temporaryDirectory()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try SQLiteStore(path: directory + "/gatehouse.sqlite")
            return try await body(store)
        case .postgres:
            return try await TestPostgres.withDatabase { location in
                try await PostgresStore.with(location, logger: TestPostgres.logger) { try await body($0) }
            }
        }
    }
}

/// The PostgreSQL server the tests use: `GATEHOUSE_TEST_POSTGRES_URL` (scripts/test starts a throwaway one).
/// Each test gets a database of its own, created empty and dropped afterwards, so tests run in parallel.
enum TestPostgres {
    static let variable = "GATEHOUSE_TEST_POSTGRES_URL"

    static var logger: Logger {
        var logger = Logger(label: "gatehouse-test.postgres")
        logger.logLevel = .warning
        return logger
    }

    /// The server's admin location; without the variable, the test case fails under `CI` and is skipped (with a
    /// note) otherwise.
    static func adminLocation() throws -> PostgresLocation {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            let message = "\(variable) is not set: run scripts/test, which starts a throwaway PostgreSQL, or point it at a server"
            if ProcessInfo.processInfo.environment["CI"] != nil {
                throw TestFailure("PostgreSQL tests cannot run under CI: \(message)")
            }
            Issue.record("PostgreSQL case skipped: \(message)", severity: .warning)
            try Test.cancel("PostgreSQL case skipped: \(message)")
        }
        return try PostgresLocation(url: url)
    }

    /// Runs `body` with the location of a new, empty database, and drops the database afterwards.
    static func withDatabase<T: Sendable>(_ body: (PostgresLocation) async throws -> T) async throws -> T {
        let admin = try adminLocation()
        let name = "gatehouse_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // CREATE DATABASE copies template1 and fails while another session is connected to it ("source database
        // template1 is being accessed by other users": a CREATE of another test a moment before); tried again.
        var attempt = 0
        while true {
            do {
                try await execute(admin, "CREATE DATABASE \(name)")
                break
            } catch {
                attempt += 1
                guard attempt < 5 else { throw TestFailure("CREATE DATABASE failed: \(String(reflecting: error))") }
                try await Task.sleep(for: .milliseconds(300 * attempt))
            }
        }
        do {
            // The whole suite runs at once on few cores: connecting may wait for CPU far longer than in production.
            var location = admin.with(database: name)
            location.connectTimeout = .seconds(60)
            // A store keeps its whole pool open: four connections each, so that the tests running at once stay
            // well under the throwaway server's max_connections.
            location.poolSize = 4
            let result = try await body(location)
            try await execute(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            return result
        } catch {
            _ = try? await execute(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
    }

    /// A URL for `gatehouse serve --database`.
    static func url(of location: PostgresLocation) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let user = location.username.addingPercentEncoding(withAllowedCharacters: allowed) ?? location.username
        let password = location.password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0) } ?? ""
        let host = location.host.contains(":") ? "[\(location.host)]" : location.host
        return "postgres://\(user)\(password)@\(host):\(location.port)/\(location.database)?sslmode=\(location.tls.rawValue)&connect_timeout=\(location.connectTimeout.components.seconds)&pool_size=\(location.poolSize)"
    }

    /// Runs one statement (trusted SQL) on its own connection to `location`, returning the rows' first column as text.
    @discardableResult
    static func execute(_ location: PostgresLocation, _ sql: String) async throws -> [String] {
        let connection = try await PostgresConnection.connect(configuration: try location.connectionConfiguration, id: 1, logger: logger)
        do {
            var texts: [String] = []
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await row in rows {
                if let cell = row.first(where: { _ in true }), let text = try? cell.decode(String.self) { texts.append(text) }
            }
            try await connection.close()
            return texts
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
