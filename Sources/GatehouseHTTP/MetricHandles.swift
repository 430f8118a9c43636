package import Metrics
package import Prometheus
import Synchronization

/// swift-metrics handles made once per label and dimensions, then reused.
///
/// Making a `Counter` or `Timer` looks its series up in the Prometheus registry (hashing every label, under the
/// registry's lock); on a request path that costs more than the rest of the bookkeeping. Callers pass bounded
/// dimensions only (route templates, statuses, check names), so the cache stays small.
package final class MetricHandles: Sendable {
    private struct Key: Hashable {
        let label: String
        let dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    /// The factory handles are made with (its registry is what `/metrics` shows).
    package let factory: PrometheusMetricsFactory
    private let counters = Mutex<[Key: Metrics.Counter]>([:])
    private let timers = Mutex<[Key: Metrics.Timer]>([:])

    package init(factory: PrometheusMetricsFactory) { self.factory = factory }

    /// The counter of `label` with `dimensions`.
    package func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Counter {
        Self.handle(in: counters, Key(label, dimensions)) { Metrics.Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    /// The timer (a histogram of seconds) of `label` with `dimensions`.
    package func timer(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Timer {
        Self.handle(in: timers, Key(label, dimensions)) { Metrics.Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    private static func handle<Handle>(in cache: borrowing Mutex<[Key: Handle]>, _ key: Key, make: () -> Handle) -> Handle {
        cache.withLock { cache in
            if let handle = cache[key] { return handle }
            let handle = make()
            cache[key] = handle
            return handle
        }
    }
}

/// A request's counter and timer, found by a key of the caller's own (route or service, status, …) with one lookup:
/// ``MetricHandles`` builds its key from label arrays, which costs more per request than the rest of the bookkeeping.
/// The key must be bounded (templates and statuses, not paths).
package final class KeyedMetricHandles<Key: Hashable & Sendable>: Sendable {
    private let cache = Mutex<[Key: Handles]>([:])

    /// A counter and a timer.
    package struct Handles: Sendable {
        package let counter: Metrics.Counter
        package let timer: Metrics.Timer

        package init(counter: Metrics.Counter, timer: Metrics.Timer) {
            self.counter = counter
            self.timer = timer
        }
    }

    package init() {}

    /// The handles of `key`, made by `make` the first time.
    package func handles(_ key: Key, make: () -> Handles) -> Handles {
        cache.withLock { cache in
            if let found = cache[key] { return found }
            let made = make()
            cache[key] = made
            return made
        }
    }
}

extension Metrics.Timer {
    /// Records `duration`.
    package func record(_ duration: Duration) {
        recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
