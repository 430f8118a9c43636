import ArgumentParser
import Foundation
import GatehousePostgres
import GatehouseSQLite
import GatehouseStore
import Logging

/// `gatehouse store`: moving and keeping a deployment's store — copy the embedded SQLite store into PostgreSQL (or
/// back) without any client registering again; back up and restore the embedded store.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Copy a store into another (SQLite to PostgreSQL or back), back up or restore the embedded one.",
        subcommands: [Copy.self, Backup.self, Restore.self]
    )

    /// A store named on the command line: a PostgreSQL URL, or the data folder of an embedded store.
    enum Location {
        case sqlite(directory: String)
        case postgres(PostgresLocation)

        init(_ text: String) throws {
            if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
                self = .postgres(try PostgresLocation(url: text))
            } else {
                self = .sqlite(directory: text)
            }
        }

        var databasePath: String? {
            if case .sqlite(let directory) = self { return SQLiteStore.path(inDataDirectory: directory) }
            return nil
        }

        /// Opens the store (an embedded one must exist when `mustExist`), runs `body`, and closes it.
        func withStore<T>(mustExist: Bool, _ body: (any StoreRowAccess) async throws -> T) async throws -> T {
            switch self {
            case .sqlite(let directory):
                let path = SQLiteStore.path(inDataDirectory: directory)
                if mustExist, !FileManager.default.fileExists(atPath: path) { throw CommandFailure("No store at \(path).") }
                return try await body(try SQLiteStore.open(dataDirectory: directory))
            case .postgres(let location):
                var logger = Logger(label: "gatehouse.store")
                logger.logLevel = .warning
                do {
                    return try await PostgresStore.with(location, logger: logger) { try await body($0) }
                } catch let error as CommandFailure {
                    throw error
                } catch let error as StoreCopy.Failure {
                    throw error
                } catch {
                    throw CommandFailure("\(location)", error)
                }
            }
        }
    }

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every registration, check state, signing key, policy version, user, lockout, revocation, device hold and audit event into another store.",
            discussion: """
                Stop every node on the source first, or copy from a backup (gatehouse store backup): rows changed in \
                the source after they were copied are not copied again. An interrupted copy is finished by running it \
                again (--into-non-empty): rows the target has are left as they are. The counts and a sample of rows \
                are compared afterwards. Authorization codes (a minute long) are not copied.
                """)

        @Option(help: ArgumentHelp("The store to copy: a data folder (embedded SQLite) or a postgres:// URL.", valueName: "store"))
        var from: String

        @Option(help: ArgumentHelp("The store to copy into: a data folder (embedded SQLite) or a postgres:// URL.", valueName: "store"))
        var to: String

        @Flag(help: "Copy into a store that holds rows already (to finish an interrupted copy); its rows are kept.")
        var intoNonEmpty = false

        @Option(help: "Rows per page (one read and one insert transaction each).")
        var pageSize = 500

        func run() async throws {
            let source = try Location(from), target = try Location(to)
            if let a = source.databasePath, let b = target.databasePath,
               URL(fileURLWithPath: a).standardizedFileURL == URL(fileURLWithPath: b).standardizedFileURL {
                throw CommandFailure("--from and --to name the same store.")
            }
            let started = ContinuousClock.now
            try await source.withStore(mustExist: true) { from in
                try await target.withStore(mustExist: false) { into in
                    let copy = StoreCopy(from: from, to: into, pageSize: pageSize)
                    let holding = try await copy.nonEmptyTargetTables()
                    if !holding.isEmpty, !intoNonEmpty {
                        throw CommandFailure("\(into.rowsLocation) holds rows already (\(holding.joined(separator: ", "))): copy into an empty store, or pass --into-non-empty to finish an interrupted copy.")
                    }
                    print("Copying \(from.rowsLocation) into \(into.rowsLocation)")
                    do {
                        let reports = try await copy.run { report in
                            print("  \(report.table): \(report.read) read, \(report.inserted) new; \(report.targetCount) in the target; \(report.sampled) compared")
                        }
                        let elapsed = (ContinuousClock.now - started).components
                        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                        print("Copied \(reports.map(\.read).reduce(0, +)) rows in \(String(format: "%.1f", seconds)) s; counts and samples agree.")
                        print("The source must not change while it is copied: stop its nodes for about this long, or copy from a backup.")
                    } catch let failure as StoreCopy.Failure {
                        throw CommandFailure("The copy is not complete: \(failure)")
                    }
                }
            }
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent copy of the embedded store to a new file, while it serves (SQLite's online backup).",
            discussion: "For PostgreSQL, use pg_dump: the whole database is the deployment (see the operators guide).")

        @Option(help: "The folder of the embedded database.")
        var data: String = ".gatehouse"

        @Argument(help: "The backup file to write (it must not exist).")
        var file: String

        func run() async throws {
            let path = SQLiteStore.path(inDataDirectory: data)
            guard FileManager.default.fileExists(atPath: path) else { throw CommandFailure("No store at \(path).") }
            do {
                try await SQLiteStore(path: path).backup(to: file)
            } catch let failure as StoreCopy.Failure {
                throw CommandFailure("Cannot write the backup: \(failure)")
            } catch {
                throw CommandFailure("Cannot write the backup to \(file)", error)
            }
            _ = chmod(file, 0o600)
            print("Backed up \(path) to \(file)")
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a backup in place as the embedded store of a data folder. Stop every server on that folder first.")

        @Option(help: "The folder of the embedded database.")
        var data: String = ".gatehouse"

        @Flag(help: "Replace an existing store (it is kept beside as gatehouse.sqlite.replaced-<time>).")
        var replace = false

        @Argument(help: "The backup file (from gatehouse store backup).")
        var file: String

        func run() async throws {
            guard FileManager.default.fileExists(atPath: file) else { throw CommandFailure("No backup at \(file).") }
            // A backup that is not a Gatehouse store, or holds anything Gatehouse's store has not (a trigger, a
            // table), is refused before anything is touched — the backup file included (it is read only).
            do throws(SQLiteStore.BackupRefusal) {
                try SQLiteStore.verifyBackup(at: file)
            } catch {
                throw CommandFailure("\(file) is not a Gatehouse store: \(error.description)")
            }
            try SQLiteStore.createDataDirectory(data)
            let path = SQLiteStore.path(inDataDirectory: data)
            let manager = FileManager.default
            if manager.fileExists(atPath: path) {
                guard replace else { throw CommandFailure("\(path) exists: pass --replace to replace it (it is kept beside).") }
                let kept = path + ".replaced-\(Int(Date().timeIntervalSince1970))"
                try manager.moveItem(atPath: path, toPath: kept)
                // Its write-ahead log goes with it: it may hold its last commits.
                for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
                    try manager.moveItem(atPath: path + suffix, toPath: kept + suffix)
                }
                print("The store it replaces is kept as \(kept)")
            }
            for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: path + suffix) }
            try manager.copyItem(atPath: file, toPath: path)
            _ = chmod(path, 0o600)
            print("Restored \(file) as \(path)")
        }
    }
}
