import GatehouseHTTP
import Hummingbird
public import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
public import ServiceLifecycle
public import UnixSignals

/// `serve` on the project's own front (``ServerConfiguration/Front/own``, plain HTTP/1.x): the listener both commands
/// share (``FrontListener``) and a connection's pipeline set up on its event loop — no task per connection:
///
/// 1. ``RequestHeadTimeoutHandler``: the first head within `headerReadTimeout` (`408`);
/// 2. NIO's HTTP/1 codec with its pipelining handler (a pipelined request waits until the answer before it ended) and
///    its protocol error handler (`400` for a request it cannot read);
/// 3. ``HTTP10ResponseHandler`` (HTTP/1.0 answered in 1.0) and ``RequestBodyDeadlineHandler`` before the conversion
///    to HTTP types;
/// 4. the idle timeout (NIO's `IdleStateHandler`, acted on by the router's handler);
/// 5. ``LoopAnswerHandler``: answers from memory on the loop;
/// 6. ``RouterChannelHandler``: the router, one task per request on the loop.
///
/// Not yet on it (served by Hummingbird's server, the default): TLS and HTTP/2.
struct ServeFront: Sendable {
    let responder: RouterResponder<GatehouseRequestContext>
    let loopAnswers: LoopAnswers?
    let idleTimeout: TimeAmount
    let headerReadTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    let serverName: String?
    let date = HTTPDate()
    /// The largest request body the router's handler collects (`413` beyond).
    let maxBody: Int
    let logger: Logger

    /// The JSON body of the `408` for a head that did not arrive in time.
    static let headTimeoutBody = #"{"errorCode":"REQUEST_TIMEOUT","errorMsg":"The request head did not arrive in time."}"#

    /// Sets up an accepted connection, on its event loop.
    func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(RequestHeadTimeoutHandler(timeout: headerReadTimeout, progress: FirstRequestProgress(),
                                                                answerBody: Self.headTimeoutBody, logger: logger))
            try operations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true,
                                                       withOutboundHeaderValidation: false)
            try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try HTTP10ResponseHandler.add(to: operations)
            try RequestBodyDeadlineHandler.add(to: operations, timeout: bodyTimeout, logger: logger)
            try operations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
            if let loopAnswers { try operations.addHandler(LoopAnswerHandler(loopAnswers)) }
            try operations.addHandler(RouterChannelHandler(responder: responder, serverName: serverName, date: date, maxBody: maxBody,
                                                           logger: logger))
        }
    }
}

/// The authorization server as a service: on Hummingbird's server (``ServerConfiguration/Front/hummingbird``), or on
/// the project's own front (``ServeFront``) with the services that run beside it (the policy watcher, the audit
/// writer, the OTLP exporter).
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
