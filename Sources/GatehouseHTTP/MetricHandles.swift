import Metrics
import Prometheus
import Synchronization

/// swift-metrics handles made once per label and dimensions, then reused.
///
/// Making a `Counter` or `Timer` looks its series up in the Prometheus registry (hashing every label, under the
/// registry's lock); on a request path that costs more than the rest of the bookkeeping. Callers pass bounded
/// dimensions only (route templates, statuses, check names), so the cache stays small.
public final class MetricHandles: Sendable {
    private struct Key: Hashable {
        let label: String
        let dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    /// The factory handles are made with (its registry is what `/metrics` shows).
    public let factory: PrometheusMetricsFactory
    private let counters = Mutex<[Key: Metrics.Counter]>([:])
    private let timers = Mutex<[Key: Metrics.Timer]>([:])

    public init(factory: PrometheusMetricsFactory) { self.factory = factory }

    /// The counter of `label` with `dimensions`.
    public func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Counter {
        let key = Key(label, dimensions)
        return counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Metrics.Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }

    /// The timer (a histogram of seconds) of `label` with `dimensions`.
    public func timer(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Timer {
        let key = Key(label, dimensions)
        return timers.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = Metrics.Timer(label: label, dimensions: dimensions, factory: factory)
            timers[key] = timer
            return timer
        }
    }
}

extension Metrics.Timer {
    /// Records `duration`.
    public func record(_ duration: Duration) {
        recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
