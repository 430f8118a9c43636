import Foundation
import GRDB
import NIOPosix
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// The embedded default store: one SQLite file in WAL mode, through GRDB.
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
    private let decodedRegistrations = DecodedRegistrations()

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
    /// arrive together, each in a savepoint of its own, on a thread of NIO's blocking pool) and returns once it is
    /// committed. A body that throws has its own changes rolled back, and only those.
    func writing<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(body)
    }

    /// Opens (creating it if needed) the store of a data folder: `<directory>/gatehouse.sqlite`, the folder made
    /// owner-only (0700) when it is created.
    public static func open(dataDirectory directory: String, durability: Durability = .normal) throws -> SQLiteStore {
        try createDataDirectory(directory)
        return try SQLiteStore(path: (directory as NSString).appendingPathComponent("gatehouse.sqlite"), durability: durability)
    }

    /// Creates `directory` (and its parents) for a database, owner-only (0700); an existing one is left as it is.
    public static func createDataDirectory(_ directory: String) throws {
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func encode(_ value: some Encodable) throws -> String { try StoreCoding.shared.encode(value) }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T { try StoreCoding.shared.decode(type, text) }

    // MARK: Registrations

    public func createRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        try await writing { db in
            do {
                try db.cachedStatement(sql: "INSERT INTO registrations (client_id, record, application_id, device_id) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [registration.clientID, text, registration.data.application.id, registration.data.device.id])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError.duplicate
            }
        }
        decodedRegistrations.remember(registration, as: text)
    }

    public func updateRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        try await writing { db in
            try db.execute(
                sql: "UPDATE registrations SET record = ?, application_id = ?, device_id = ? WHERE client_id = ?",
                arguments: [text, registration.data.application.id, registration.data.device.id, registration.clientID])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    public func registration(clientID: String) async throws -> ClientRegistrationRecord? {
        let text = try await readingWithWrites { db in try Self.registrationText(db, clientID) }
        return try text.map { try decodedRegistrations.record($0, clientID: clientID) }
    }

    private static func registrationText(_ db: Database, _ clientID: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT record FROM registrations WHERE client_id = ?"), arguments: [clientID])
    }

    private static func states(_ db: Database, _ clientID: String) throws -> [String: VersionedState] {
        var result: [String: VersionedState] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT name, data, version FROM client_states WHERE client_id = ?"), arguments: [clientID])
        while let row = try rows.next() {
            let data: Data = row["data"]
            result[row["name"]] = VersionedState(data: [UInt8](data), version: row["version"])
        }
        return result
    }

    public func registrationAndState(clientID: String) async throws -> (registration: ClientRegistrationRecord, state: [String: VersionedState])? {
        // One statement (a consistent snapshot without a transaction): the registration with each of its states.
        let read = try await readingWithWrites { db -> (String, [String: VersionedState])? in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT r.record, s.name, s.data, s.version FROM registrations r
                LEFT JOIN client_states s ON s.client_id = r.client_id WHERE r.client_id = ?
                """), arguments: [clientID])
            var text: String?
            var states: [String: VersionedState] = [:]
            while let row = try rows.next() {
                if text == nil { text = row[0] }
                if let name: String = row[1] {
                    let data: Data = row[2]
                    states[name] = VersionedState(data: [UInt8](data), version: row[3])
                }
            }
            return text.map { ($0, states) }
        }
        guard let (text, state) = read else { return nil }
        return (try decodedRegistrations.record(text, clientID: clientID), state)
    }

    // MARK: Client state

    public func clientState(clientID: String) async throws -> [String: VersionedState] {
        try await readingWithWrites { db in try Self.states(db, clientID) }
    }

    public func commit(clientID: String, writes: [StateWrite]) async throws -> Bool {
        guard !writes.isEmpty else { return true }
        do {
            try await writing { db in
                for write in writes {
                    if write.expectedVersion == 0 {
                        try db.cachedStatement(sql: "INSERT OR IGNORE INTO client_states (client_id, name, data, version) VALUES (?, ?, ?, 1)")
                            .execute(arguments: [clientID, write.name, Data(write.data)])
                    } else {
                        try db.cachedStatement(
                            sql: "UPDATE client_states SET data = ?, version = version + 1 WHERE client_id = ? AND name = ? AND version = ?")
                            .execute(arguments: [Data(write.data), clientID, write.name, write.expectedVersion])
                    }
                    // Another round wrote first: this one's writes are rolled back, all of them.
                    if db.changesCount != 1 { throw StaleVersion() }
                }
            }
            return true
        } catch is StaleVersion {
            return false
        }
    }

    /// A state's version was not the one a round read.
    private struct StaleVersion: Error {}

    // MARK: Codes

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        let text = try encode(code)
        let inserted = try await writing { db in
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE expires_at < ?").execute(arguments: [code.expiresAt - 3_600_000])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO authorization_codes (code_hash, record, expires_at) VALUES (?, ?, ?)")
                .execute(arguments: [code.codeHash, text, code.expiresAt])
            return db.changesCount > 0
        }
        if !inserted { throw StoreError.duplicate }
    }

    public func consumeCode(hash: String) async throws -> AuthorizationCodeRecord? {
        let text = try await writing { db in
            try String.fetchOne(db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE code_hash = ? RETURNING record"), arguments: [hash])
        }
        return try text.map { try decode(AuthorizationCodeRecord.self, $0) }
    }

    // MARK: Keys

    public func signingKeys() async throws -> [SigningKeyRecord] {
        let texts = try await reading { db in
            try String.fetchAll(db, sql: "SELECT record FROM signing_keys ORDER BY created_at, kid")
        }
        return try texts.map { try decode(SigningKeyRecord.self, $0) }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        let inserted = try await writing { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO signing_keys (kid, record, created_at) VALUES (?, ?, ?)",
                arguments: [key.kid, text, key.createdAt])
            return db.changesCount > 0
        }
        if !inserted { throw StoreError.duplicate }
    }

    public func insertFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        let text = try encode(key)
        // One writer at a time (the write transaction): the check and the insert cannot interleave with another's.
        return try await writing { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM signing_keys") == 0 else { return false }
            try db.execute(
                sql: "INSERT INTO signing_keys (kid, record, created_at) VALUES (?, ?, ?)", arguments: [key.kid, text, key.createdAt])
            return true
        }
    }

    public func updateSigningKey(_ key: SigningKeyRecord) async throws {
        let text = try encode(key)
        try await writing { db in
            try db.execute(sql: "UPDATE signing_keys SET record = ? WHERE kid = ?", arguments: [text, key.kid])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    // MARK: Users

    public func upsertUser(_ user: UserRecord) async throws {
        let text = try encode(user)
        try await writing { db in
            try db.execute(
                sql: "INSERT INTO users (username, record) VALUES (?, ?) ON CONFLICT(username) DO UPDATE SET record = excluded.record",
                arguments: [user.username, text])
        }
    }

    public func user(named username: String) async throws -> UserRecord? {
        let text = try await readingWithWrites { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT record FROM users WHERE username = ?"), arguments: [username])
        }
        return try text.map { try decode(UserRecord.self, $0) }
    }

    // MARK: Revocations

    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        let text = try encode(revocation)
        try await writing { db in
            try db.execute(sql: "INSERT INTO revocations (record, revoked_at) VALUES (?, ?)", arguments: [text, revocation.revokedAt])
        }
    }

    public func revocations(since: Int64) async throws -> [RevocationRecord] {
        let texts = try await reading { db in
            try String.fetchAll(db, sql: "SELECT record FROM revocations WHERE revoked_at >= ? ORDER BY revoked_at, id", arguments: [since])
        }
        return try texts.map { try decode(RevocationRecord.self, $0) }
    }
}
