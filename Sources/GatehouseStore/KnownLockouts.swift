import GatehouseChecks
import Synchronization

/// The accounts this node knows to be locked: a view of the store's locked accounts, so that a path whose secret
/// is already verified (a confidential client's remembered secret) need not read the store on every request.
///
/// The view is read from the store every few seconds (``refresh(from:now:)``, by the policy watcher) and updated
/// at once by this node's own failures, successes and unlocks. A lock made on another node therefore holds here
/// within one refresh — at once if this node sees a failure of that account itself, which reads the stored count.
/// A view that is too old (the store unreachable) or overfull tells nothing, and the store is read instead.
public final class KnownLockouts: Sendable {
    private struct Entry {
        /// Epoch ms; the account is locked while this is in the future (0: known not locked).
        var lockedUntil: Int64
        /// When this node learnt it: entries learnt during a refresh outlive that refresh's (older) reading.
        var sequence: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var sequence: UInt64 = 0
        /// Epoch ms of the last complete reading of the store; `nil` before the first.
        var refreshedAt: Int64?
    }

    private let state = Mutex(State())
    /// How old the last refresh may be before the view is not trusted, ms.
    public let maxAge: Int64
    /// The most locked accounts a refresh reads; with more, the view is not trusted.
    public let capacity: Int

    public init(maxAge: Int64, capacity: Int = 10_000) {
        self.maxAge = maxAge
        self.capacity = capacity
    }

    /// Whether `account` is locked at `now`, or `nil` when the view cannot tell (never read, too old, overfull).
    public func isLocked(_ account: String, now: Int64) -> Bool? {
        state.withLock { state in
            guard let refreshedAt = state.refreshedAt, now - refreshedAt <= maxAge else { return nil }
            return (state.entries[account]?.lockedUntil ?? 0) > now
        }
    }

    /// What this node just learnt of `account` from the store: locked until `lockedUntil` (0 or a past time: not locked).
    public func learn(_ account: String, lockedUntil: Int64) {
        state.withLock { state in
            state.sequence += 1
            state.entries[account] = Entry(lockedUntil: lockedUntil, sequence: state.sequence)
        }
    }

    /// `account` is not locked any more (a success, an operator's unlock).
    public func forget(_ account: String) { learn(account, lockedUntil: 0) }

    /// Reads the store's locked accounts and makes them the view; what this node learnt meanwhile is kept.
    public func refresh(from store: any AccountFailureStore, now: Int64) async throws {
        let start = state.withLock { $0.sequence }
        let locked = try await store.lockedAccounts(now: now, limit: capacity)
        state.withLock { state in
            var entries: [String: Entry] = [:]
            entries.reserveCapacity(locked.count)
            for record in locked { entries[record.account] = Entry(lockedUntil: record.state.lockedUntil, sequence: 0) }
            for (account, entry) in state.entries where entry.sequence > start { entries[account] = entry }
            state.entries = entries
            state.refreshedAt = locked.count < capacity ? now : nil
        }
    }
}
