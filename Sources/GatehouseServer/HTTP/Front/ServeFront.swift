import GatehouseHTTP
import Hummingbird
public import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2
import NIOHTTP2
import NIOSSL
public import ServiceLifecycle
public import UnixSignals

/// How `serve` serves its connections: the listener both commands share
/// (``FrontListener``) and a connection's pipeline set up on its event loop — no task per connection. Over TLS, ALPN
/// picks HTTP/2 (each stream its own router handler) or HTTP/1.1; HTTP/1.x, plain or over TLS:
///
/// 1. ``RequestHeadTimeoutHandler``: the first head within `headerReadTimeout` (`408`);
/// 2. NIO's HTTP/1 codec with its pipelining handler (a pipelined request waits until the answer before it ended) and
///    its protocol error handler (`400` for a request it cannot read);
/// 3. ``HTTP10ResponseHandler`` (HTTP/1.0 answered in 1.0) and ``RequestBodyDeadlineHandler`` before the conversion
///    to HTTP types;
/// 4. the idle timeout (NIO's `IdleStateHandler`, acted on by the router's handler);
/// 5. ``LoopAnswerHandler``: answers from memory on the loop;
/// 6. ``RouterChannelHandler``: the router, one task per request on the loop.
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
        guard let tls else {
            return channel.eventLoop.makeCompletedFuture { try http1(channel.pipeline.syncOperations, secure: false) }
        }
        do {
            let handler = tls.clientCertificates
                ? NIOSSLServerHandler(context: tls.context, customVerificationCallback: ReloadableTLS.acceptAnyClientCertificate)
                : NIOSSLServerHandler(context: tls.context)
            try channel.pipeline.syncOperations.addHandler(handler)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.configureHTTP2SecureUpgrade(
            h2ChannelConfigurator: { connection in
                connection.eventLoop.makeCompletedFuture {
                    try connection.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try connection.pipeline.syncOperations.addHandler(CloseWhenIdle())
                }.flatMap {
                    connection.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                            try stream.pipeline.syncOperations.addHandler(routerHandler())
                        }
                    }.map { _ in }
                }
            },
            http1ChannelConfigurator: { connection in
                connection.eventLoop.makeCompletedFuture { try http1(connection.pipeline.syncOperations, secure: true) }
            })
    }

    /// An HTTP/1.x connection's handlers, after TLS if any.
    private func http1(_ operations: ChannelPipeline.SynchronousOperations, secure: Bool) throws {
        try operations.addHandler(RequestHeadTimeoutHandler(timeout: headerReadTimeout, progress: FirstRequestProgress(),
                                                            answerBody: Self.headTimeoutBody, logger: logger))
        try operations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true,
                                                   withOutboundHeaderValidation: false)
        try operations.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
        try HTTP10ResponseHandler.add(to: operations)
        try RequestBodyDeadlineHandler.add(to: operations, timeout: bodyTimeout, logger: logger)
        try operations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
        if let loopAnswers { try operations.addHandler(LoopAnswerHandler(loopAnswers)) }
        try operations.addHandler(routerHandler())
    }

    private func routerHandler() -> RouterChannelHandler {
        RouterChannelHandler(responder: responder, onEventLoop: requestsOnEventLoop, serverName: serverName, date: date,
                             maxBody: maxBody, logger: logger)
    }
}

/// Closes an HTTP/2 connection that read nothing for the idle timeout (NIO's `IdleStateHandler` before it).
private final class CloseWhenIdle: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
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
