import GatehouseHTTP
import GatehouseProtocol
import Metrics
import Prometheus
import Synchronization

/// Counters of the gateway's authentication decisions, per realm, and its Prometheus metrics (`/metrics`):
/// connections, requests by service and status with latency, WebSocket upgrades, authentications by realm and
/// result (and how many of the successes a connection remembered), expired WebSockets and upstream errors. A
/// registry of its own per gateway, so that several gateways in one process (as in the tests) count apart.
public final class GatewayStatistics: Sendable {
    /// One realm's counters.
    public struct Counters: Sendable, Equatable {
        /// Requests that carried credentials.
        public var attempts = 0
        /// Of those, the ones that authenticated (allowed or forbidden).
        public var successes = 0
        /// Of the successes, the ones admitted again by their connection's remembered credentials
        /// (``RememberedAdmission``) rather than by the login chain.
        public var remembered = 0
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

    /// A realm's counters and its `gatehouse_gateway_authentications_total` counters by result, under one lock:
    /// a request's authentication is counted with one lookup.
    private struct RealmCounts {
        var counters = Counters()
        var authentications: [String: Metrics.Counter] = [:]
        /// `gatehouse_gateway_remembered_admissions_total` of the realm, made at its first remembered admission.
        var remembered: Metrics.Counter?

        mutating func count(_ decision: Realm.Decision, withCredentials: Bool) {
            if withCredentials { counters.attempts += 1 }
            switch decision {
            case .allow: counters.successes += 1
            case .forbidden: counters.successes += 1; counters.forbidden += 1
            case .challenge:
                counters.challenges += 1
                if withCredentials { counters.failures += 1 }
            }
        }
    }

    private let realms = Mutex<[String: RealmCounts]>([:])
    /// The registry `/metrics` shows.
    public let registry = PrometheusCollectorRegistry()
    /// Counters and timers, made once per label set.
    private let handles: MetricHandles

    public init() {
        handles = MetricHandles(factory: .gatehouse(registry: registry))
    }

    private func count(_ name: String, _ dimensions: [(String, String)] = []) {
        handles.counter(name, dimensions).increment()
    }

    private func meter(_ name: String) -> Meter { Meter(label: name, factory: handles.factory) }

    /// The Prometheus text exposition.
    public func exposition() -> [UInt8] { registry.emitToBuffer() }

    /// A client connection accepted; `closed` when it ends.
    func connectionOpened() {
        count("gatehouse_gateway_connections_total")
        meter("gatehouse_gateway_connections_open").increment()
    }

    func connectionClosed() { meter("gatehouse_gateway_connections_open").decrement() }

    private struct RequestKey: Hashable {
        var service: String
        var status: Int
    }

    /// The request counter and latency timer of each service and status.
    private let requestHandles = KeyedMetricHandles<RequestKey>()

    /// An HTTP request answered (upgrades aside): by service name (`none` when no service matched) and status.
    func request(service: String, status: Int, duration: Duration) {
        let metrics = requestHandles.handles(RequestKey(service: service, status: status)) {
            .init(counter: handles.counter("gatehouse_gateway_requests_total", [("service", service), ("status", String(status))]),
                  timer: handles.timer("gatehouse_gateway_request_duration_seconds", [("service", service)]))
        }
        metrics.counter.increment()
        metrics.timer.recordNanoseconds(duration.wholeNanoseconds)
    }

    /// A WebSocket upgraded and relayed; `webSocketClosed` when it ends.
    func webSocketOpened(service: String) {
        count("gatehouse_gateway_websocket_upgrades_total", [("service", service)])
        meter("gatehouse_gateway_websockets_open").increment()
    }

    func webSocketClosed() { meter("gatehouse_gateway_websockets_open").decrement() }

    /// The upstream could not be reached or failed mid-answer (the client got `502`, or a WebSocket closed 1011).
    func upstreamError(service: String, protocol kind: String) {
        count("gatehouse_gateway_upstream_errors_total", [("service", service), ("protocol", kind)])
    }

    /// The counters of `realm`.
    public func counters(realm: String) -> Counters { realms.withLock { $0[realm]?.counters ?? Counters() } }

    func record(realm: String, credentials: Credentials, decision: Realm.Decision) {
        record(realm: realm, withCredentials: !credentials.isEmpty, decision: decision)
    }

    /// A request admitted again by its connection's ``RememberedAdmission``: a success with credentials.
    func recordReadmission(realm: String) {
        record(realm: realm, withCredentials: true, decision: .allow(Subject()), remembered: true)
    }

    private func record(realm: String, withCredentials: Bool, decision: Realm.Decision, remembered: Bool = false) {
        let result = switch decision {
        case .allow: "success"
        case .forbidden: "forbidden"
        case .challenge: withCredentials ? "failure" : "challenge"
        }
        let (counter, rememberedCounter) = realms.withLock { all -> (Metrics.Counter, Metrics.Counter?) in
            all[realm, default: RealmCounts()].count(decision, withCredentials: withCredentials)
            var rememberedCounter: Metrics.Counter?
            if remembered {
                all[realm]?.counters.remembered += 1
                rememberedCounter = all[realm]?.remembered ?? handles.counter("gatehouse_gateway_remembered_admissions_total", [("realm", realm)])
                all[realm]?.remembered = rememberedCounter
            }
            if let counter = all[realm]?.authentications[result] { return (counter, rememberedCounter) }
            let made = handles.counter("gatehouse_gateway_authentications_total", [("realm", realm), ("result", result)])
            all[realm]?.authentications[result] = made
            return (made, rememberedCounter)
        }
        counter.increment()
        rememberedCounter?.increment()
    }

    func recordExpiry(realm: String) {
        count("gatehouse_gateway_websockets_expired_total", [("realm", realm)])
        realms.withLock { all in all[realm, default: RealmCounts()].counters.expiredConnections += 1 }
    }
}
