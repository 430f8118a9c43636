import Synchronization

/// An asynchronous mutual-exclusion lock per key: rounds for one client run one after the other on this node,
/// while rounds for different clients run in parallel. Waiters are served in arrival order.
///
/// A `Mutex` over the waiting lists rather than an actor: taking a free lock and giving it back are two short
/// critical sections on the caller's thread, with no executor hop (an actor costs two hops per round).
final class KeyedLock: Sendable {
    /// Held keys, each with the continuations waiting for it in arrival order.
    private let held = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    private func acquire(_ key: String) async {
        let free = held.withLock { held in
            guard held[key] == nil else { return false }
            held[key] = []
            return true
        }
        if free { return }
        await withCheckedContinuation { continuation in
            // The holder may have released in between: then the lock is ours at once.
            let ours = held.withLock { held in
                guard held[key] != nil else {
                    held[key] = []
                    return true
                }
                held[key]!.append(continuation)
                return false
            }
            if ours { continuation.resume() }
        }
    }

    private func release(_ key: String) {
        let next = held.withLock { held -> CheckedContinuation<Void, Never>? in
            guard var queue = held[key], !queue.isEmpty else {
                held[key] = nil
                return nil
            }
            let next = queue.removeFirst()
            held[key] = queue
            return next
        }
        next?.resume()   // the lock passes to it still held
    }

    /// Runs `body` while holding the lock for `key`.
    func withLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }
}
