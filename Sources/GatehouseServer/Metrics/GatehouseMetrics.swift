import Foundation
import GatehouseHTTP
import Metrics
public import Prometheus

/// The server's metrics, through swift-metrics into a Prometheus registry of this server's own (so that several
/// servers in one process, as in the tests, count apart), served at `/metrics` in Prometheus' text format.
public final class GatehouseMetrics: Sendable {
    /// The registry `/metrics` shows.
    public let registry: PrometheusCollectorRegistry
    /// Counters and timers, made once per label set.
    let handles: MetricHandles

    public init() {
        registry = PrometheusCollectorRegistry()
        handles = MetricHandles(factory: .gatehouse(registry: registry))
    }

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Metrics.Counter { handles.counter(name, dimensions) }

    func timer(_ name: String, _ dimensions: [(String, String)] = []) -> Metrics.Timer { handles.timer(name, dimensions) }

    /// A request answered: by route template (not the path, which would name clients), method and status.
    func request(route: String, method: String, status: Int, duration: Duration) {
        let handles = requestHandles(route: route, method: method, status: status)
        handles.counter.increment()
        handles.timer.record(duration)
    }

    /// The counter and timer ``request(route:method:status:duration:)`` records to, for a caller that keeps them
    /// (``LoopAnswers``: one lookup per route instead of one per answer).
    func requestHandles(route: String, method requested: String, status: Int) -> KeyedMetricHandles<RequestKey>.Handles {
        let method = Self.methodLabel(requested)
        return requestHandles.handles(RequestKey(route: route, method: method, status: status)) {
            .init(counter: counter("gatehouse_http_requests_total", [("route", route), ("method", method), ("status", String(status))]),
                  timer: timer("gatehouse_http_request_duration_seconds", [("route", route), ("method", method)]))
        }
    }

    /// The `method` label: one of the methods HTTP defines, else `other` — label values come from a closed set, so
    /// that made-up methods (HTTP/2 lets a client send any token) cannot make a label set each.
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT": method
        default: "other"
        }
    }

    struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private let requestHandles = KeyedMetricHandles<RequestKey>()

    /// What one check's part of a pre-authorization round came to.
    enum CheckOutcome: String { case success, challenge, failure, block }

    /// A check ran in a round (`rounds`), with its outcome: a challenge, a success, a wrong answer (`failures`:
    /// an answer judged wrong, challenged again) or a block (`blocks`: refused).
    func check(_ name: String, outcome: CheckOutcome?, answered: Bool) {
        counter("gatehouse_check_rounds_total", [("check", name)]).increment()
        switch outcome {
        case .success?: counter("gatehouse_check_successes_total", [("check", name)]).increment()
        case .challenge?:
            counter("gatehouse_check_challenges_total", [("check", name)]).increment()
            if answered { counter("gatehouse_check_failures_total", [("check", name)]).increment() }
        case .failure?, .block?: counter("gatehouse_check_blocks_total", [("check", name)]).increment()
        case nil: break
        }
    }

    /// A request of `route` answered from memory on its connection's event loop (``LoopAnswers``); also counted in
    /// `gatehouse_http_requests_total` like every answer.
    func loopAnswers(route: String) -> Metrics.Counter { counter("gatehouse_http_loop_answers_total", [("route", route)]) }

    func tokenIssued(grant: String) { counter("gatehouse_tokens_issued_total", [("grant", grant)]).increment() }
    func tokenIntrospected(active: Bool) { counter("gatehouse_tokens_introspected_total", [("active", String(active))]).increment() }
    func tokensRevoked(by: String) { counter("gatehouse_tokens_revoked_total", [("by", by)]).increment() }
    func registration() { counter("gatehouse_registrations_total").increment() }

    /// The Prometheus text exposition.
    public func exposition() -> [UInt8] { registry.emitToBuffer() }
}
