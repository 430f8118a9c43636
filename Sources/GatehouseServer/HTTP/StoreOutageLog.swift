import GatehouseStore
import Logging
import Synchronization

/// The log of store outages answered `503`: the first of each kind at once, with the database's own message (a
/// full disk named as such), then one line every ``interval`` saying how many more there were, so that an outage
/// under load writes a few lines, not one per request.
final class StoreOutageLog: Sendable {
    static let shared = StoreOutageLog()

    static let interval = Duration.seconds(10)

    private struct Kind {
        var lastLogged: ContinuousClock.Instant
        var since = 0
        var lastSeen: ContinuousClock.Instant
    }

    private let kinds = Mutex<[StoreUnavailable.Kind: Kind]>([:])

    func record(_ outage: StoreUnavailable, logger: Logger) {
        let now = ContinuousClock.now
        let suppressed: Int? = kinds.withLock { kinds in
            if var kind = kinds[outage.kind], now - kind.lastLogged < Self.interval {
                kind.since += 1
                kind.lastSeen = now
                kinds[outage.kind] = kind
                return nil
            }
            let since = kinds[outage.kind]?.since ?? 0
            kinds[outage.kind] = Kind(lastLogged: now, lastSeen: now)
            return since
        }
        guard let suppressed else { return }
        logger.warning("Requests answered 503: \(outage)",
                       metadata: suppressed > 0 ? ["earlier": .stringConvertible(suppressed)] : [:])
    }

    /// Whether a request was answered `503` for an outage of `kind` within `interval`.
    func answered(_ kind: StoreUnavailable.Kind, within interval: Duration) -> Bool {
        guard let seen = kinds.withLock({ $0[kind]?.lastSeen }) else { return false }
        return ContinuousClock.now - seen < interval
    }
}
