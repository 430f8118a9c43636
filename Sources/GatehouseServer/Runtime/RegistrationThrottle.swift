import GatehouseChecks

/// Registrations allowed per source address in a window, counted in the store so that every node sharing it
/// counts the same (N nodes allowed N times the limit when each counted its own): a flood of self-registrations from
/// one address (to fill the store, or to reset MobileFirst's per-registration counters — which the source throttle
/// already counts across registrations) is answered `429` once the address used its allowance, for a window.
///
/// The counts are an ``AccountLockouts`` under `registrations:<address>` (``RequestSource/key(of:)``): each
/// registration is one count; the `limit`th locks the address for `window`.
final class RegistrationThrottle: Sendable {
    let limit: Int
    /// ms.
    let window: Int64
    private let counts: any AccountLockouts

    /// - Parameter counts: where registrations are counted, given the policy of ``countingPolicy(limit:window:)``
    ///   (the store's ``StoreAccountLockouts`` on a server).
    init(limit: Int, window: Int64, counts: (AccountLockoutPolicy) -> any AccountLockouts) {
        self.limit = limit
        self.window = window
        self.counts = counts(Self.countingPolicy(limit: limit, window: window))
    }

    /// `limit` registrations in `window` lock the address for `window`, every time.
    static func countingPolicy(limit: Int, window: Int64) -> AccountLockoutPolicy {
        AccountLockoutPolicy(threshold: limit, window: window, duration: window, growth: 1, maxDuration: window)
    }

    /// Counts one registration from `address` at `now`; `false` (nothing counted) when the address is over its allowance.
    func admit(_ address: String, now: Int64) async throws -> Bool {
        let account = "registrations:" + RequestSource.key(of: address)
        // Read from the store, not from this node's view of locks (a few seconds behind other nodes'): a
        // registration writes to the store anyway, and the allowance then holds exactly across nodes.
        guard try await !counts.isLocked(account, now: now) else { return false }
        try await counts.recordFailure(account, now: now)
        return true
    }
}
