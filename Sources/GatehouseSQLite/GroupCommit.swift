import GRDB
import NIOPosix
import Synchronization

/// The SQLite store's writer: writes that arrive while another group is being written wait for the next group,
/// and a group is one transaction.
///
/// Every write runs on one connection, in order of arrival, each in a savepoint of its own when it shares its
/// group. A write that throws has only its own changes rolled back and gets its own error. The others' changes are
/// committed together, and each caller is answered after that commit (or given the commit's error). A group of
/// one needs no savepoint. This is group commit: under load, a commit's cost (the WAL's pages, its locks and, with
/// `synchronous=FULL`, its fsync) is shared by many requests, and every written page is appended once per group
/// rather than once per request.
///
/// Groups are written on a thread pool of their own: `SQLiteStore` gives each store a thread, so that blocking work
/// queued on any shared pool never holds up a request's store calls. A writer that finds more work
/// after ``groupsPerTurn`` groups hands over to a new turn at the back of the pool's queue, so that anything else
/// queued there is not starved.
final class GroupCommit: Sendable {
    /// One write waiting for its group. `run` does the write and returns how to answer its caller once the group is
    /// committed; `fail` answers it with an error instead (its own, or the group's).
    struct Write: Sendable {
        let run: @Sendable (Database) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
        /// It only reads, in one statement: a group of such needs no transaction.
        let readsOnly: Bool
    }

    private struct Queue: ~Copyable {
        var waiting: [Write] = []
        var writing = false
        /// Groups written so far (for tests and curious operators).
        var groups = 0
    }

    private let pool: DatabasePool
    private let threads: NIOThreadPool
    private let queue = Mutex(Queue())
    /// Groups one turn writes before it lets the pool's other work go first.
    static let groupsPerTurn = 8
    /// The most writes in one group (a bound on how long one transaction holds the database).
    static let maximumGroup = 256

    init(pool: DatabasePool, threads: NIOThreadPool = .singleton) {
        self.pool = pool
        self.threads = threads
    }

    /// Runs `body` in the next group's transaction and returns its result once that transaction is committed.
    /// `readsOnly`: `body` only reads, in one statement (one statement sees one snapshot by itself); a group of
    /// such reads alone runs without a transaction, without taking the write lock.
    func write<T: Sendable>(readsOnly: Bool = false, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let write = Write(
                run: { db in
                    let value = try body(db)
                    return { continuation.resume(returning: value) }
                },
                fail: { error in continuation.resume(throwing: error) },
                readsOnly: readsOnly)
            let starts = queue.withLock { queue in
                queue.waiting.append(write)
                guard !queue.writing else { return false }
                queue.writing = true
                return true
            }
            if starts { turn() }
        }
    }

    /// Writes waiting for the next group.
    var waiting: Int { queue.withLock { $0.waiting.count } }

    /// Groups written so far.
    var groupsWritten: Int { queue.withLock { $0.groups } }

    /// Hands a turn of writing to the blocking pool.
    private func turn() {
        threads.submit { [self] state in
            guard case .active = state else {
                let abandoned = queue.withLock { queue in
                    defer { queue.waiting = []; queue.writing = false }
                    return queue.waiting
                }
                for write in abandoned { write.fail(CancellationError()) }
                return
            }
            for _ in 0..<Self.groupsPerTurn {
                let group = queue.withLock { queue -> [Write] in
                    let count = min(queue.waiting.count, Self.maximumGroup)
                    defer { queue.waiting.removeFirst(count) }
                    return Array(queue.waiting.prefix(count))
                }
                if group.isEmpty { break }
                commit(group)
                queue.withLock { $0.groups += 1 }
            }
            let more = queue.withLock { queue in
                if queue.waiting.isEmpty { queue.writing = false }
                return queue.writing
            }
            if more { turn() }
        }
    }

    /// Writes `group` in one transaction and answers every write in it.
    private func commit(_ group: [Write]) {
        if group.allSatisfy(\.readsOnly) {
            read(group)
            return
        }
        var answers: [@Sendable () -> Void] = []
        var failures: [(Write, any Error)] = []
        var rest = group[...]
        while !rest.isEmpty {
            answers.removeAll(keepingCapacity: true)
            var succeeded: [Write] = []
            do {
                try pool.writeWithoutTransaction { db in
                    // Cached statements, not GRDB's `beginTransaction` / `commit`, which compile `BEGIN IMMEDIATE
                    // TRANSACTION` and `COMMIT TRANSACTION` anew each time (0.5 % of a flow's CPU in `allStatements`
                    // alone); GRDB follows the transaction through SQLite's hooks either way.
                    try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
                    do {
                        if rest.count == 1, let only = rest.first {
                            rest.removeFirst()
                            do {
                                answers.append(try only.run(db))
                                succeeded.append(only)
                            } catch {
                                try db.rollback()
                                failures.append((only, error))
                                return
                            }
                        } else {
                            while let write = rest.first {
                                rest.removeFirst()
                                try db.cachedStatement(sql: "SAVEPOINT gatehouse_write").execute()
                                do {
                                    answers.append(try write.run(db))
                                    succeeded.append(write)
                                    try db.cachedStatement(sql: "RELEASE gatehouse_write").execute()
                                } catch {
                                    failures.append((write, error))
                                    // Some errors (a full disk, an I/O error) roll the whole transaction back: the
                                    // group's earlier writes are lost too, and the rest go to a new transaction.
                                    guard db.isInsideTransaction else { throw GroupLost(error: error) }
                                    try db.cachedStatement(sql: "ROLLBACK TO gatehouse_write").execute()
                                    try db.cachedStatement(sql: "RELEASE gatehouse_write").execute()
                                }
                            }
                        }
                        try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
                    } catch {
                        try? db.rollback()
                        throw error
                    }
                }
            } catch {
                let cause = (error as? GroupLost)?.error ?? error
                for write in succeeded { failures.append((write, cause)) }
                answers.removeAll()
                if !(error is GroupLost) {
                    // The transaction could not begin or commit: nothing of what is left can be written either.
                    for write in rest { failures.append((write, cause)) }
                    rest = []
                }
            }
            for answer in answers { answer() }
        }
        for (write, error) in failures { write.fail(error) }
    }

    /// Runs a group of one-statement reads, without a transaction, and answers each.
    private func read(_ group: [Write]) {
        var outcomes: [Result<@Sendable () -> Void, any Error>] = []
        outcomes.reserveCapacity(group.count)
        // Each read's error is its own outcome: the group itself cannot fail.
        pool.writeWithoutTransaction { db in
            for read in group { outcomes.append(Result { try read.run(db) }) }
        }
        for (read, outcome) in zip(group, outcomes) {
            switch outcome {
            case .success(let answer): answer()
            case .failure(let error): read.fail(error)
            }
        }
    }

    /// A write's error that also rolled back its group's transaction.
    private struct GroupLost: Error {
        let error: any Error
    }
}
