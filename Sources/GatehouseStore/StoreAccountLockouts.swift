public import GatehouseChecks

/// Per-account lockout counted in the store, so every node sharing it sees the same counts (compare-and-set:
/// concurrent failures on several nodes are all counted).
public struct StoreAccountLockouts: AccountLockouts {
    public let store: any AccountFailureStore & AuditStore
    public let policy: AccountLockoutPolicy
    /// The node named in the audit event of a lockout (`account.locked`).
    public let node: String?
    /// This node's view of the locked accounts, kept up to date by this node's own failures and successes.
    public let known: KnownLockouts?

    public init(store: any AccountFailureStore & AuditStore, policy: AccountLockoutPolicy, node: String? = nil, known: KnownLockouts? = nil) {
        self.store = store
        self.policy = policy
        self.node = node
        self.known = known
    }

    public func isLocked(_ account: String, now: Int64) async throws -> Bool {
        guard policy.threshold > 0 else { return false }
        return try await store.accountFailures(account)?.state.isLocked(at: now) ?? false
    }

    /// From ``known`` when it can tell (no store read; another node's lock shows within its refresh); else `nil`,
    /// and ``isLockedAsKnown(_:now:)`` reads the store.
    public func isLockedFromMemory(_ account: String, now: Int64) -> Bool? {
        guard policy.threshold > 0 else { return false }
        return known?.isLocked(account, now: now)
    }

    public func recordFailure(_ account: String, now: Int64) async throws {
        guard policy.threshold > 0 else { return }
        for _ in 0..<16 {
            let stored = try await store.accountFailures(account)
            let next = policy.failed(stored?.state, now: now)
            if try await store.saveAccountFailures(account, state: next, expectedVersion: stored?.version ?? 0) {
                known?.learn(account, lockedUntil: next.lockedUntil)
                if next.isLocked(at: now), !(stored?.state.isLocked(at: now) ?? false) {
                    // The audit log names the account (never the password tried); a failed write fails no login.
                    let user = account.hasPrefix("user:") ? String(account.dropFirst(5)) : nil
                    let client = account.hasPrefix("client:") ? String(account.dropFirst(7)) : nil
                    try? await store.appendAudit([AuditEvent(
                        time: now, event: Self.lockEvent(of: account), clientID: client, user: user, node: node,
                        detail: "\(account.prefix(128)) locked until \(next.lockedUntil)")])
                }
                return
            }
        }
    }

    /// The audit event of `account`'s lock: `account.locked` for a user's (and a client's), `source.locked` for an
    /// address locked by its failures, `registrations.locked` for one over its registrations.
    static func lockEvent(of account: String) -> String {
        for kind in ["source", "registrations"] where account.hasPrefix(kind + ":") { return kind + ".locked" }
        return "account.locked"
    }

    public func recordSuccess(_ account: String) async throws {
        guard policy.threshold > 0, try await store.accountFailures(account) != nil else { return }
        try await store.deleteAccountFailures(account)
        known?.forget(account)
    }
}
