import Synchronization

/// Counters of the gateway's authentication decisions, per realm.
public final class GatewayStatistics: Sendable {
    /// One realm's counters.
    public struct Counters: Sendable, Equatable {
        /// Requests that carried credentials and ran the login chain.
        public var attempts = 0
        /// Of those, the ones that authenticated (allowed or forbidden).
        public var successes = 0
        /// Of those, the ones answered by a new challenge.
        public var failures = 0
        /// Requests answered with 401 (with or without credentials).
        public var challenges = 0
        /// Requests answered with 403.
        public var forbidden = 0
        /// WebSocket connections closed because their credentials expired.
        public var expiredConnections = 0
        public init() {}
    }

    private let counters = Mutex<[String: Counters]>([:])

    public init() {}

    /// The counters of `realm`.
    public func counters(realm: String) -> Counters { counters.withLock { $0[realm] ?? Counters() } }

    func record(realm: String, credentials: Credentials, decision: Realm.Decision) {
        counters.withLock { all in
            var c = all[realm] ?? Counters()
            if !credentials.isEmpty { c.attempts += 1 }
            switch decision {
            case .allow: c.successes += 1
            case .forbidden: c.successes += 1; c.forbidden += 1
            case .challenge:
                c.challenges += 1
                if !credentials.isEmpty { c.failures += 1 }
            }
            all[realm] = c
        }
    }

    func recordExpiry(realm: String) {
        counters.withLock { all in all[realm, default: Counters()].expiredConnections += 1 }
    }
}
