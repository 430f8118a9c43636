import Foundation
import Testing

/// Hostile input round 3, finding 11 (issue 54): `gatehouse store restore` accepted an unrelated SQLite file — and its
/// "check", opening the file as a store, wrote Gatehouse's tables into it — and restored a backup carrying a trigger
/// that wipes the audit log, trigger and all. A backup is now verified read-only as Gatehouse's by its schema, and
/// refused with anything else in it. The files are made and changed with Python's sqlite3, a client we did not write.
@Suite(.timeLimit(.minutes(3))) struct RestoreVerificationTests {
    static func gatehouse(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runOffThePool(GatehouseProcess.executable.path, arguments)
    }

    static func python(_ script: String, _ arguments: [String]) async throws -> String {
        let run = try await runOffThePool("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard run.status == 0 else { throw TestFailure("python: \(run.output)") }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let schema = "import sqlite3, sys; print(','.join(sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute(\"SELECT name FROM sqlite_master\"))))"

    @Test func onlyGatehousesOwnBackupIsRestored() async throws {
        let directory = TestServer.temporaryDirectory()
        let restored = TestServer.temporaryDirectory()
        let backup = directory + "-backup.sqlite", other = directory + "-notes.sqlite", trapped = directory + "-trapped.sqlite"
        defer { for path in [directory, restored, backup, other, trapped] { try? FileManager.default.removeItem(atPath: path) } }
        try await TestServer.run(dataDirectory: directory) { _ async throws in
            #expect(try await Self.gatehouse(["store", "backup", "--data", directory, backup]).status == 0)
        }
        // An unrelated SQLite database: refused, and left exactly as it was (no Gatehouse table written into it).
        _ = try await Self.python("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (text TEXT)'); c.commit()", [other])
        let unrelated = try await Self.gatehouse(["store", "restore", "--data", restored, other])
        #expect(unrelated.status != 0 && unrelated.output.contains("not a Gatehouse store"), "\(unrelated.output)")
        #expect(try await Self.python(Self.schema, [other]) == "notes")
        #expect(!FileManager.default.fileExists(atPath: SQLiteStorePath.of(restored)))
        // Gatehouse's backup with a trigger that wipes the audit log, or a table of its own: refused.
        for addition in ["CREATE TRIGGER wipe AFTER INSERT ON audit_events BEGIN DELETE FROM audit_events; END",
                         "CREATE TABLE stash (secret TEXT)", "CREATE VIEW everything AS SELECT * FROM registrations"] {
            try? FileManager.default.removeItem(atPath: trapped)
            try FileManager.default.copyItem(atPath: backup, toPath: trapped)
            _ = try await Self.python("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()", [trapped, addition])
            let refused = try await Self.gatehouse(["store", "restore", "--data", restored, trapped])
            #expect(refused.status != 0 && refused.output.contains("not a Gatehouse store"), "\(addition): \(refused.output)")
            #expect(!FileManager.default.fileExists(atPath: SQLiteStorePath.of(restored)), "nothing put in place")
        }
        // The backup as made: restored.
        let put = try await Self.gatehouse(["store", "restore", "--data", restored, backup])
        #expect(put.status == 0, "\(put.output)")
    }
}

enum SQLiteStorePath {
    static func of(_ directory: String) -> String { (directory as NSString).appendingPathComponent("gatehouse.sqlite") }
}
