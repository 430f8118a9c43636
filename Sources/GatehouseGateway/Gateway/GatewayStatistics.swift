import GatehouseHTTP
import GatehouseProtocol
import Metrics
public import Prometheus
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
        /// (`RememberedAdmission`) rather than by the login chain.
        public var remembered = 0
        /// Of those, the ones answered by a new challenge.
        public var failures = 0
        /// Requests answered with 401 (with or without credentials).
        public var challenges = 0
        /// Requests answered with 403.
        public var forbidden = 0
        /// Of the attempts, the ones the chain could not decide now (answered 503; never a failure).
        public var unavailable = 0
        /// Refused for the client's address (``Realm/Decision/throttled(reason:retryAfter:)``).
        public var throttled = 0
        /// WebSocket connections closed because their credentials expired.
        public var expiredConnections = 0
        public init() {}
    }

    /// A realm's counters and its `gatehouse_gateway_authentications_total` counters by result: looked up once by
    /// name per decision, and kept by a connection's ``RememberedAdmission``, which counts each readmission with it
    /// and no lookup.
    final class RealmTally: Sendable {
        let counters = Mutex(Counters())
        /// `gatehouse_gateway_authentications_total{result="success"}` and
        /// `gatehouse_gateway_remembered_admissions_total` of the realm.
        let successes: Metrics.Counter
        let remembered: Metrics.Counter
        /// The counters of the other results, made at their first use.
        private let others = Mutex<[String: Metrics.Counter]>([:])
        private let realm: String
        private let handles: MetricHandles

        fileprivate init(realm: String, handles: MetricHandles) {
            self.realm = realm
            self.handles = handles
            successes = handles.counter("gatehouse_gateway_authentications_total", [("realm", realm), ("result", "success")])
            remembered = handles.counter("gatehouse_gateway_remembered_admissions_total", [("realm", realm)])
        }

        func count(_ decision: Realm.Decision, withCredentials: Bool) {
            counters.withLock { counters in
                if withCredentials { counters.attempts += 1 }
                switch decision {
                case .allow: counters.successes += 1
                case .forbidden: counters.successes += 1; counters.forbidden += 1
                case .challenge:
                    counters.challenges += 1
                    if withCredentials { counters.failures += 1 }
                case .unavailable:
                    counters.unavailable += 1
                case .throttled:
                    counters.throttled += 1
                }
            }
            let result: String
            switch decision {
            case .allow:
                successes.increment()
                return
            case .forbidden: result = "forbidden"
            case .challenge: result = withCredentials ? "failure" : "challenge"
            case .unavailable: result = "unavailable"
            case .throttled: result = "throttled"
            }
            others.withLock { others in
                if let counter = others[result] { return counter }
                let made = handles.counter("gatehouse_gateway_authentications_total", [("realm", realm), ("result", result)])
                others[result] = made
                return made
            }.increment()
        }

        /// A request admitted again by its connection's memory: a success with credentials, remembered.
        func countReadmission() {
            counters.withLock { counters in
                counters.attempts += 1
                counters.successes += 1
                counters.remembered += 1
            }
            successes.increment()
            remembered.increment()
        }
    }

    private let realms = Mutex<[String: RealmTally]>([:])
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

    /// A connection refused for want of file descriptors (``AcceptPressureHandler``).
    func acceptRefused() { count("gatehouse_gateway_accept_refused_total") }

    /// The listener stopped accepting at the descriptor budget's level (``AcceptPressureHandler``).
    func acceptPaused() { count("gatehouse_gateway_accept_paused_total") }

    struct RequestKey: Hashable {
        var service: String
        var status: Int
    }

    /// The request counter and latency timer of each service and status.
    private let requestHandles = KeyedMetricHandles<RequestKey>()

    /// An HTTP request answered (upgrades aside): by service name (`none` when no service matched) and status.
    func request(service: String, status: Int, duration: Duration) {
        let metrics = requestMetrics(service: service, status: status)
        metrics.counter.increment()
        metrics.timer.recordNanoseconds(duration.wholeNanoseconds)
    }

    /// The request counter and latency timer of `service` and `status`, for ``request(service:status:duration:)`` (a
    /// connection keeps the last ones it counted with).
    func requestMetrics(service: String, status: Int) -> KeyedMetricHandles<RequestKey>.Handles {
        requestHandles.handles(RequestKey(service: service, status: status)) {
            .init(counter: handles.counter("gatehouse_gateway_requests_total", [("service", service), ("status", String(status))]),
                  timer: handles.timer("gatehouse_gateway_request_duration_seconds", [("service", service)]))
        }
    }

    /// A WebSocket upgraded and relayed; `webSocketClosed` when it ends.
    func webSocketOpened(service: String) {
        count("gatehouse_gateway_websocket_upgrades_total", [("service", service)])
        meter("gatehouse_gateway_websockets_open").increment()
    }

    func webSocketClosed() { meter("gatehouse_gateway_websockets_open").decrement() }

    /// A WebSocket's relayed frames, when it ends: `gatehouse_gateway_websocket_frames_total{service, to, written}`,
    /// `to` `upstream` or `client`, `written` `as_received` (its bytes as they came) or `reencoded` (through NIO's
    /// encoder: a frame that must be masked or unmasked on the way).
    func webSocketFrames(service: String, _ frames: RelayedFrames) {
        let counts = [("upstream", "as_received", frames.toUpstreamAsReceived), ("upstream", "reencoded", frames.toUpstreamReencoded),
                      ("client", "as_received", frames.toClientAsReceived), ("client", "reencoded", frames.toClientReencoded)]
        for (to, written, count) in counts where count > 0 {
            handles.counter("gatehouse_gateway_websocket_frames_total", [("service", service), ("to", to), ("written", written)]).increment(by: count)
        }
    }

    /// The upstream could not be reached or failed mid-answer (the client got `502`, or a WebSocket closed 1011).
    func upstreamError(service: String, protocol kind: String) {
        count("gatehouse_gateway_upstream_errors_total", [("service", service), ("protocol", kind)])
    }

    /// The counters of `realm`.
    public func counters(realm: String) -> Counters { realms.withLock { $0[realm] }?.counters.withLock { $0 } ?? Counters() }

    /// The tally of `realm`, made at its first use.
    func tally(realm: String) -> RealmTally {
        realms.withLock { all in
            if let tally = all[realm] { return tally }
            let made = RealmTally(realm: realm, handles: handles)
            all[realm] = made
            return made
        }
    }

    func record(realm: String, credentials: Credentials, decision: Realm.Decision) {
        tally(realm: realm).count(decision, withCredentials: !credentials.isEmpty)
    }

    func recordExpiry(realm: String) {
        count("gatehouse_gateway_websockets_expired_total", [("realm", realm)])
        tally(realm: realm).counters.withLock { $0.expiredConnections += 1 }
    }
}
