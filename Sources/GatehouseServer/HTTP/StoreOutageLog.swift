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
    }

    private let kinds = Mutex<[StoreUnavailable.Kind: Kind]>([:])

    func record(_ outage: StoreUnavailable, logger: Logger) {
        let now = ContinuousClock.now
        let suppressed: Int? = kinds.withLock { kinds in
            if var kind = kinds[outage.kind], now - kind.lastLogged < Self.interval {
                kind.since += 1
                kinds[outage.kind] = kind
                return nil
            }
            let since = kinds[outage.kind]?.since ?? 0
            kinds[outage.kind] = Kind(lastLogged: now)
            return since
        }
        guard let suppressed else { return }
        logger.warning("Requests answered 503: \(outage)",
                       metadata: suppressed > 0 ? ["earlier": .stringConvertible(suppressed)] : [:])
    }
}
