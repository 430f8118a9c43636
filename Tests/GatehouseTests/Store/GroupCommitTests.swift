import Foundation
import GRDB
import GatehouseProtocol
import GatehouseStore
import NIOCore
import NIOPosix
import Testing

@testable import GatehouseSQLite

/// The SQLite store's group commit: writes that arrive together share one transaction, and each keeps its own
/// outcome. The store's writer thread is held up by the test, so that the writes queued meanwhile form one group.
@Suite(.timeLimit(.minutes(3))) struct GroupCommitTests {
    /// A store whose writer runs on a pool of one thread that the test can hold up.
    final class HeldStore: Sendable {
        let store: SQLiteStore
        let threads = NIOThreadPool(numberOfThreads: 1)
        let directory = TestServer.temporaryDirectory()
        private let gate = DispatchSemaphore(value: 0)
        private let holding = DispatchSemaphore(value: 0)

        init() throws {
            threads.start()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/gatehouse.sqlite", durability: .normal, writerThreads: threads)
        }

        /// Holds the writer's thread until ``release()``; returns once it is held (any turn before is over).
        func hold() async throws {
            threads.submit { [gate, holding] _ in
                holding.signal()
                gate.wait()
            }
            let held = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { [holding] in continuation.resume(returning: holding.wait(timeout: .now() + 5) == .success) }
            }
            try #require(held)
        }

        func release() { gate.signal() }

        /// Waits (2 s at most) until `count` writes wait for the writer.
        func waitForQueued(_ count: Int) async throws {
            for _ in 0..<2_000 where store.writes.waiting < count { try await Task.sleep(for: .milliseconds(1)) }
            try #require(store.writes.waiting == count)
        }

        func close() async throws {
            try await threads.shutdownGracefully()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    struct Refused: Error, Equatable {}

    static func names(_ store: SQLiteStore) async throws -> [String] {
        try await store.reading { db in try String.fetchAll(db, sql: "SELECT client_id FROM registrations ORDER BY client_id") }
    }

    @Test func writesQueuedTogetherAreOneTransactionAndAFailingOneLosesOnlyItsOwnChanges() async throws {
        let held = try HeldStore()
        let store = held.store
        let before = store.writes.groupsWritten
        try await held.hold()
        let first = Task { try await store.createRegistration(StoreConformanceTests.registration("a")) }
        try await held.waitForQueued(1)
        let failing = Task {
            try await store.writing { db in
                try db.execute(sql: "INSERT INTO registrations (client_id, record, application_id, device_id) VALUES ('b', '{}', 'x', 'y')")
                throw Refused()
            }
        }
        try await held.waitForQueued(2)
        let duplicate = Task { try await store.createRegistration(StoreConformanceTests.registration("a", device: "other")) }
        try await held.waitForQueued(3)
        let third = Task { try await store.createRegistration(StoreConformanceTests.registration("c")) }
        try await held.waitForQueued(4)
        held.release()

        try await first.value
        await #expect(throws: Refused.self) { try await failing.value }
        await #expect(throws: StoreError.duplicate) { try await duplicate.value }
        try await third.value
        #expect(store.writes.groupsWritten - before == 1, "the four writes were one group")
        #expect(try await Self.names(store) == ["a", "c"], "the failing write's own insert was rolled back, the others' kept")
        #expect(try await store.registration(clientID: "a") == StoreConformanceTests.registration("a"))
        try await held.close()
    }

    @Test func aStaleRoundInAGroupWritesNoneOfItsStatesAndTheOthersCommit() async throws {
        let held = try HeldStore()
        let store = held.store
        try await store.createRegistration(StoreConformanceTests.registration("c1"))
        #expect(try await store.commit(clientID: "c1", writes: [StateWrite(name: "pin", expectedVersion: 0, data: Array("v1".utf8))]))
        try await held.hold()
        // Two rounds read version 1; the first to be written wins, the second changes nothing (not even its new row).
        let winner = Task { try await store.commit(clientID: "c1", writes: [StateWrite(name: "pin", expectedVersion: 1, data: Array("won".utf8))]) }
        try await held.waitForQueued(1)
        let loser = Task {
            try await store.commit(clientID: "c1", writes: [
                StateWrite(name: "captcha", expectedVersion: 0, data: Array("new".utf8)),
                StateWrite(name: "pin", expectedVersion: 1, data: Array("lost".utf8)),
            ])
        }
        try await held.waitForQueued(2)
        let read = Task { try await store.clientState(clientID: "c1") }
        try await held.waitForQueued(3)
        held.release()

        #expect(try await winner.value)
        #expect(try await loser.value == false)
        let seen = try await read.value
        #expect(seen["pin"] == VersionedState(data: Array("won".utf8), version: 2), "a read in the group sees the writes before it")
        #expect(seen["captcha"] == nil)
        let state = try await store.clientState(clientID: "c1")
        #expect(state == ["pin": VersionedState(data: Array("won".utf8), version: 2)])
        try await held.close()
    }

    @Test func aWriteThatEndsTheTransactionFailsTheWritesBeforeItAndTheRestGoOn() async throws {
        // Some errors (a full disk, an I/O error) roll back the whole transaction; a write that rolls it back itself
        // stands in for them here.
        let held = try HeldStore()
        let store = held.store
        try await held.hold()
        let before = Task { try await store.createRegistration(StoreConformanceTests.registration("a")) }
        try await held.waitForQueued(1)
        let breaking = Task {
            try await store.writing { db in
                try db.execute(sql: "ROLLBACK")
                throw Refused()
            }
        }
        try await held.waitForQueued(2)
        let after = Task { try await store.createRegistration(StoreConformanceTests.registration("c")) }
        try await held.waitForQueued(3)
        held.release()

        await #expect(throws: Refused.self, "its insert was lost with the transaction: the caller is told") { try await before.value }
        await #expect(throws: Refused.self) { try await breaking.value }
        try await after.value
        #expect(try await Self.names(store) == ["c"])
        try await held.close()
    }

    @Test func manyConcurrentWritersAllLand() async throws {
        let held = try HeldStore()
        let store = held.store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { try await store.createRegistration(StoreConformanceTests.registration(String(format: "c%03d", index))) }
            }
            try await group.waitForAll()
        }
        #expect(try await Self.names(store).count == 200)
        #expect(store.writes.groupsWritten <= 200)
        try await held.close()
    }
}

/// A request's reads alone need no transaction: another process's write transaction (a `gatehouse keys` command on
/// the same file) does not hold them up.
@Suite(.timeLimit(.minutes(3))) struct GroupCommitReadTests {
    @Test func readsAloneAreNotHeldUpByAnotherWriter() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/gatehouse.sqlite")
        try await store.createRegistration(StoreConformanceTests.registration("c1"))
        #expect(try await store.commit(clientID: "c1", writes: [StateWrite(name: "pin", expectedVersion: 0, data: Array("v1".utf8))]))

        // Another connection, as another process would, holds the write lock until released.
        let other = try DatabaseQueue(path: directory + "/gatehouse.sqlite")
        let acquired = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? other.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                acquired.signal()
                _ = release.wait(timeout: .now() + 30)
                try db.execute(sql: "ROLLBACK")
            }
        }
        let holding = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: acquired.wait(timeout: .now() + 10) == .success) }
        }
        try #require(holding)
        defer { release.signal() }
        // In a transaction, each read would wait for the lock and fail with `database is locked` after the busy
        // timeout (10 s).
        #expect(try await store.clientState(clientID: "c1")["pin"]?.version == 1)
        #expect(try await store.storedClient(clientID: "c1")?.registration.clientID == "c1")
        #expect(try await store.registration(clientID: "c1") != nil)
    }

    /// The store's calls run on a thread of its own: NIO's shared blocking pool busy with long work (bcrypt at a
    /// high cost, say) does not hold them up.
    @Test func storeCallsGoOnWhileNIOsSharedPoolIsBusy() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/gatehouse.sqlite")
        let release = DispatchSemaphore(value: 0)
        let threads = NIOSingletons.blockingPoolThreadCountSuggestion
        for _ in 0..<threads { NIOThreadPool.singleton.submit { _ in _ = release.wait(timeout: .now() + 60) } }
        defer { for _ in 0..<threads { release.signal() } }
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await store.createRegistration(StoreConformanceTests.registration("c1"))
                    // Reads of the store's reader threads too (signing keys, policy versions, audit).
                    _ = try await store.signingKeys()
                    _ = try await store.latestPolicy()
                    return try await store.storedClient(clientID: "c1") != nil
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "a write and reads while every thread of NIO's shared pool is busy")
    }
}
