/// An asynchronous mutual-exclusion lock per key: rounds for one client run one after the other on this node,
/// while rounds for different clients run in parallel. Waiters are served in arrival order.
actor KeyedLock {
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    private func acquire(_ key: String) async {
        if waiters[key] == nil {
            waiters[key] = []
            return
        }
        await withCheckedContinuation { waiters[key, default: []].append($0) }
    }

    private func release(_ key: String) {
        guard var queue = waiters[key], !queue.isEmpty else {
            waiters[key] = nil
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue
        next.resume()
    }

    /// Runs `body` while holding the lock for `key`.
    nonisolated func withLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        do {
            let result = try await body()
            await release(key)
            return result
        } catch {
            await release(key)
            throw error
        }
    }
}
