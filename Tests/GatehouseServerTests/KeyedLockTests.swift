@testable import GatehouseServer
import Synchronization
import Testing

/// A value shared by the tasks of a test.
private final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

/// The per-client lock of rounds: one holder per key, waiters in arrival order, different keys in parallel.
@Suite(.timeLimit(.minutes(3))) struct KeyedLockTests {
    @Test func oneHolderPerKeyAndEveryWaiterServed() async throws {
        let lock = KeyedLock()
        let inside = Shared<[String: Int]>([:])
        let most = Shared(0)
        let counted = Shared(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                let key = "client-\(index % 4)"
                group.addTask {
                    try await lock.withLock(key) {
                        let now = inside.withLock { $0[key, default: 0] += 1; return $0[key]! }
                        most.withLock { $0 = max($0, now) }
                        await Task.yield()
                        inside.withLock { $0[key]! -= 1 }
                        counted.withLock { $0 += 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(most.withLock { $0 } == 1)
        #expect(counted.withLock { $0 } == 200)
    }

    @Test func waitersAreServedInArrivalOrderAndOtherKeysAreNotHeldUp() async throws {
        let lock = KeyedLock()
        let order = Shared<[Int]>([])
        let (holding, held) = AsyncStream<Void>.makeStream()
        let (releasing, release) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await lock.withLock("a") {
                held.yield()
                for await _ in releasing { break }
            }
        }
        for await _ in holding { break }
        var waiters: [Task<Void, any Error>] = []
        for index in 0..<5 {
            waiters.append(Task { try await lock.withLock("a") { order.withLock { $0.append(index) } } })
            try await Task.sleep(for: .milliseconds(20))   // arrive one after the other
        }
        // Another key is free while "a" is held.
        #expect(try await lock.withLock("b") { 42 } == 42)
        #expect(order.withLock { $0 }.isEmpty)
        release.yield()
        try await holder.value
        for waiter in waiters { try await waiter.value }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    @Test func aThrowingBodyReleasesTheLock() async throws {
        struct Failure: Error {}
        let lock = KeyedLock()
        await #expect(throws: Failure.self) { try await lock.withLock("a") { throw Failure() } }
        #expect(try await lock.withLock("a") { 1 } == 1)
    }
}
