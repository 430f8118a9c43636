import NIOCore
import Synchronization

/// At most one warning per key (a service) and interval, so that an upstream that is down under load tells the
/// operator once every few seconds, with how many like it were left out, instead of once per request.
final class WarningThrottle: Sendable {
    private let interval: TimeAmount
    private let last = Mutex<[String: (at: NIODeadline, suppressed: Int)]>([:])

    init(interval: TimeAmount) { self.interval = interval }

    /// The number of warnings about `key` left out since the last one, when this one is to be logged; `nil` when
    /// it is to be left out too.
    func allow(_ key: String, now: NIODeadline = .now()) -> Int? {
        last.withLock { last in
            if let previous = last[key], now - previous.at < interval {
                last[key] = (previous.at, previous.suppressed + 1)
                return nil
            }
            let suppressed = last[key]?.suppressed ?? 0
            if last.count >= 1024 { last.removeAll() }  // keys are the configured services: a bound for safety only
            last[key] = (now, 0)
            return suppressed
        }
    }
}
