import Foundation
import GRDB
import NIOPosix
import GatehouseChecks
import GatehouseProtocol
public import GatehouseStore

/// The embedded default store: one SQLite file in WAL mode, through GRDB. This file holds its opening, threads and
/// calls; the operations are in `SQLiteStore+<concern>.swift` (registrations, tokens, policies, accounts, activity,
/// admin, migrations).
///
/// Writes are serialized by SQLite; a round's state writes run in one transaction that checks every version
/// first, so a stale round changes nothing.
public final class SQLiteStore: GatehouseStore {
    let pool: DatabasePool
    /// Every write goes through here: one transaction per group of concurrent writes.
    let writes: GroupCommit
    /// The writer's thread, when the store made it (stopped with the store).
    private let ownedWriterThreads: NIOThreadPool?
    /// Where the reads that do not go with the writes run (``reading(_:)``): threads of the store's own, so that
    /// NIO's shared blocking pool, busy with others' work, does not hold them up (stopped with the store).
    private let readerThreads: NIOThreadPool

    deinit {
        ownedWriterThreads?.shutdownGracefully { _ in }
        readerThreads.shutdownGracefully { _ in }
    }
    let decodedRegistrations = DecodedRegistrations()

    /// What a commit survives.
    public enum Durability: String, Sendable, CaseIterable {
        /// WAL with `synchronous=NORMAL`: a commit survives the process crashing (kill -9), not the machine losing
        /// power (the last commits before it may be lost; the database stays consistent). No fsync per commit.
        case normal
        /// WAL with `synchronous=FULL`: a commit survives a power loss too, at the cost of an fsync per commit.
        case full
    }

    /// Opens (and creates or migrates) the database at `path`. The database and its WAL files are the owner's
    /// only (0600): they hold client keys, user hashes and the token-signing keys.
    ///
    /// Its writes and a request's reads run on a thread of the store's own (``GroupCommit``), its other reads on two
    /// more, so that blocking work on NIO's shared pool never holds up a store call.
    public convenience init(path: String, durability: Durability = .normal) throws {
        let writer = NIOThreadPool(numberOfThreads: 1)
        writer.start()
        do {
            try self.init(path: path, durability: durability, writerThreads: writer, ownsWriterThreads: true)
        } catch {
            writer.shutdownGracefully { _ in }
            throw error
        }
    }

    /// ``init(path:durability:)`` with the writes' groups on `writerThreads` (tests hold them up to form groups),
    /// shut down with the store when it `ownsWriterThreads`.
    init(path: String, durability: Durability, writerThreads: NIOThreadPool, ownsWriterThreads: Bool = false) throws {
        ownedWriterThreads = ownsWriterThreads ? writerThreads : nil
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        pool = try DatabasePool(path: path, configuration: configuration)
        readerThreads = NIOThreadPool(numberOfThreads: 2)
        readerThreads.start()
        writes = GroupCommit(pool: pool, threads: writerThreads)
        try Self.migrator.migrate(pool)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }

    /// Runs a read on one of the store's reader threads, with GRDB's synchronous API.
    ///
    /// GRDB's `async` reads wait for a free reader on a semaphore inside libdispatch; on Linux the Swift
    /// concurrency pool runs on those same few worker threads (two on two cores), so a burst of concurrent reads
    /// could block every worker and deadlock the process (seen with eight concurrent logins). Blocking waits
    /// belong on threads made for them.
    func reading<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await readerThreads.runIfActive { [pool] in try pool.read(body) }
    }

    /// A request's read of one client's or one account's rows: on the writer's connection, in the next group with
    /// the writes (``writing(_:)``). That connection's page cache holds what the writes just changed; a reader's
    /// connection must read again from the file every page any write changed since its last read (measured: a
    /// flow's reads on the readers cost 6 % more of the node's CPU). Reads of many rows (the admin API, keys,
    /// revocations) stay on the readers, with ``reading(_:)``, and never hold up the writes.
    /// `body` must run one statement: a group of such reads alone runs without a transaction.
    func readingWithWrites<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(readsOnly: true, body)
    }

    /// Runs `body` in the next group's write transaction (``GroupCommit``: one transaction for the writes that
    /// arrive together, each in a savepoint of its own, on the store's writer thread) and returns once it is
    /// committed. A body that throws has its own changes rolled back, and only those.
    func writing<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(body)
    }

    /// Opens (creating it if needed) the store of a data folder: `<directory>/gatehouse.sqlite`, the folder made
    /// owner-only (0700) when it is created.
    public static func open(dataDirectory directory: String, durability: Durability = .normal) throws -> SQLiteStore {
        try createDataDirectory(directory)
        return try SQLiteStore(path: path(inDataDirectory: directory), durability: durability)
    }

    /// The database file of a data folder: `<directory>/gatehouse.sqlite`.
    public static func path(inDataDirectory directory: String) -> String {
        (directory as NSString).appendingPathComponent("gatehouse.sqlite")
    }

    /// Creates `directory` (and its parents) for a database, owner-only (0700); an existing one is left as it is.
    public static func createDataDirectory(_ directory: String) throws {
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func encode(_ value: some Encodable) throws -> String { try StoreCoding.shared.encode(value) }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T { try StoreCoding.shared.decode(type, text) }
}
