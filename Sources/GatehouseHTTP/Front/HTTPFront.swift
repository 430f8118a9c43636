package import Logging
package import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2
package import NIOSSL

/// An HTTP front's connection set-up, on the accepted connection's event loop (``FrontListener`` calls
/// ``initialize(_:)``): every concern of a connection up to its requests as HTTP types, written once. Over TLS, ALPN
/// picks HTTP/2 (each stream its own request handlers) or HTTP/1.1; HTTP/1.x, plain or over TLS:
///
/// 1. ``RequestHeadTimeoutHandler``: the first head within `headerReadTimeout` (`408` with ``headTimeoutBody``);
/// 2. NIO's HTTP/1 codec with its pipelining handler (a pipelined request waits until the answer before it ended), and
///    ``RequestErrorAnswerHandler`` (a JSON `400` or `431` for a request the codec cannot read);
/// 3. ``HTTP10ResponseHandler`` (HTTP/1.0 answered in 1.0) and ``RequestBodyDeadlineHandler`` before the conversion
///    to HTTP types;
/// 4. the idle timeout (NIO's `IdleStateHandler`: its event is the request handlers' to act on; an HTTP/2 connection
///    that read nothing for that long is closed);
/// 5. the request handlers (``requestHandlers``): what the command does with requests.
///
/// `gatehouse serve` runs on it (its router behind); the gateway, which reads its requests in place and relays them as
/// bytes, shares its listener, TLS material, head timeout and accept pressure.
package struct HTTPFront: Sendable {
    /// How long a connection may read nothing (between requests, or stalled in one).
    package var idleTimeout: TimeAmount
    /// How long a new connection has to send its first complete request head.
    package var headerReadTimeout: TimeAmount
    /// How long a request's body may take after its head.
    package var bodyTimeout: TimeAmount
    /// The JSON body of the `408` for a head that did not arrive in time.
    package var headTimeoutBody: String
    /// TLS (`h2` and `http/1.1` by ALPN), asking for an optional client certificate when `clientCertificates`;
    /// `nil`: plain HTTP/1.x.
    package var tls: (context: NIOSSLContext, clientCertificates: Bool)?
    package let logger: Logger
    /// Adds the handlers that answer requests (taking `HTTPRequestPart`s, writing `HTTPResponsePart`s) at the end of an
    /// HTTP/1.x connection's pipeline (`isStream` false) or an HTTP/2 stream's (true).
    package let requestHandlers: @Sendable (_ pipeline: ChannelPipeline.SynchronousOperations, _ isStream: Bool) throws -> Void

    package init(idleTimeout: TimeAmount, headerReadTimeout: TimeAmount, bodyTimeout: TimeAmount, headTimeoutBody: String,
                 tls: (context: NIOSSLContext, clientCertificates: Bool)? = nil, logger: Logger,
                 requestHandlers: @escaping @Sendable (_ pipeline: ChannelPipeline.SynchronousOperations, _ isStream: Bool) throws -> Void) {
        self.idleTimeout = idleTimeout
        self.headerReadTimeout = headerReadTimeout
        self.bodyTimeout = bodyTimeout
        self.headTimeoutBody = headTimeoutBody
        self.tls = tls
        self.logger = logger
        self.requestHandlers = requestHandlers
    }

    /// Sets up an accepted connection, on its event loop.
    package func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
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
                    let pipeline = connection.pipeline.syncOperations
                    try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try pipeline.addHandler(CloseWhenIdle())
                    // Graceful shutdown: on quiescing, GOAWAY, the streams in progress finished (for the idle timeout
                    // at most), then the connection closed.
                    let manager = NIOHTTP2ServerConnectionManagementHandler(
                        eventLoop: connection.eventLoop,
                        configuration: .init(maxIdleTime: nil, maxAge: nil, maxGraceTime: idleTimeout, keepalive: nil))
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init(),
                        streamDelegate: manager.http2StreamDelegate
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                            try requestHandlers(stream.pipeline.syncOperations, true)
                        }
                    }
                    try pipeline.addHandler(manager)
                }
            },
            http1ChannelConfigurator: { connection in
                connection.eventLoop.makeCompletedFuture { try http1(connection.pipeline.syncOperations, secure: true) }
            })
    }

    /// An HTTP/1.x connection's handlers, after TLS if any.
    private func http1(_ operations: ChannelPipeline.SynchronousOperations, secure: Bool) throws {
        try operations.addHandler(RequestHeadTimeoutHandler(timeout: headerReadTimeout, progress: FirstRequestProgress(),
                                                            answerBody: headTimeoutBody, logger: logger))
        try operations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false,
                                                   withOutboundHeaderValidation: false)
        try operations.addHandler(RequestErrorAnswerHandler())
        try operations.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
        try HTTP10ResponseHandler.add(to: operations)
        try RequestBodyDeadlineHandler.add(to: operations, timeout: bodyTimeout, logger: logger)
        try operations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
        try requestHandlers(operations, false)
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
