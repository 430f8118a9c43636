import Synchronization

/// Registrations allowed per source address in a fixed window, on this node: a flood of self-registrations
/// from one address (to reset MobileFirst's per-registration attempt counters, or to fill the store) is answered
/// `429` once the address has used its allowance.
final class RegistrationThrottle: Sendable {
    let limit: Int
    /// ms.
    let window: Int64
    private let windows = Mutex<(start: Int64, counts: [String: Int])>((0, [:]))

    init(limit: Int, window: Int64) {
        self.limit = limit
        self.window = window
    }

    /// Counts one registration from `address` at `now`; `false` when the address is over its allowance.
    func admit(_ address: String, now: Int64) -> Bool {
        windows.withLock { state in
            if now - state.start >= window {
                state = (now, [:])
            }
            let count = state.counts[address, default: 0]
            guard count < limit else { return false }
            state.counts[address] = count + 1
            return true
        }
    }
}
