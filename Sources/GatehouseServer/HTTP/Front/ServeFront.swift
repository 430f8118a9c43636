import GatehouseHTTP
import Hummingbird
public import Logging
import NIOCore
import NIOSSL
public import ServiceLifecycle
public import UnixSignals

/// How `serve` serves its connections: the front both commands share (``HTTPFront`` on ``FrontListener``: TLS and
/// HTTP/2 by ALPN, head and body deadlines, HTTP/1.0, the idle timeout — no task per connection), with `serve`'s
/// request handlers at the end of each HTTP/1.x connection or HTTP/2 stream:
///
/// 1. ``LoopAnswerHandler`` (HTTP/1.x): answers from memory on the loop;
/// 2. ``RouterChannelHandler``: the router, one task per request on the loop.
struct ServeFront: Sendable {
    let responder: RouterResponder<GatehouseRequestContext>
    let loopAnswers: LoopAnswers?
    let idleTimeout: TimeAmount
    let headerReadTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    /// Whether a request's task runs on its connection's event loop (``ServerConfiguration/connectionTasksOnEventLoop``).
    let requestsOnEventLoop: Bool
    let serverName: String?
    let date = HTTPDate()
    /// The largest request body the router's handler collects (`413` beyond).
    let maxBody: Int
    /// ``maxBody``'s value in `serve`: 2 MiB, far above any request of the protocol (a policy applied through the
    /// admin API is the largest).
    static let maxBody = 2 * 1024 * 1024
    let logger: Logger
    /// TLS (`h2` and `http/1.1` by ALPN); `nil`: plain HTTP/1.x.
    var tls: (context: NIOSSLContext, clientCertificates: Bool)? = nil

    /// The JSON body of the `408` for a head that did not arrive in time.
    static let headTimeoutBody = #"{"errorCode":"REQUEST_TIMEOUT","errorMsg":"The request head did not arrive in time."}"#

    /// Sets up an accepted connection, on its event loop.
    func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        front.initialize(channel)
    }

    /// The shared front with `serve`'s request handlers.
    var front: HTTPFront {
        HTTPFront(idleTimeout: idleTimeout, headerReadTimeout: headerReadTimeout, bodyTimeout: bodyTimeout,
                  headTimeoutBody: Self.headTimeoutBody, tls: tls, logger: logger) { [self] pipeline, isStream in
            if !isStream, let loopAnswers { try pipeline.addHandler(LoopAnswerHandler(loopAnswers)) }
            try pipeline.addHandler(RouterChannelHandler(responder: responder, onEventLoop: requestsOnEventLoop, isStream: isStream,
                                                         serverName: serverName, date: date, maxBody: maxBody, logger: logger))
        }
    }
}

/// The authorization server as a service: its front (``ServeFront``, on the listener the gateway uses too) and the
/// services that run beside it (the policy watcher, the audit writer, the OTLP exporter).
public struct GatehouseApplication: Service {
    let service: any Service

    public func run() async throws {
        try await service.run()
    }

    /// Runs until SIGTERM or SIGINT (or `signals`), then shuts down gracefully.
    public func runService(gracefulShutdownSignals signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger) async throws {
        try await ServiceGroup(configuration: .init(services: [self], gracefulShutdownSignals: signals, logger: logger)).run()
    }
}
