import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOTLS
import NIOHTTPTypesHTTP1

/// HTTP/1.0 clients answered as RFC 9112 §9.3 asks: Hummingbird's HTTP types carry no version, so every answer went
/// out as `HTTP/1.1` on a connection left open, and a 1.0 client that waits for the close (ApacheBench, health
/// checkers, old proxies) waited forever. Between NIO's HTTP/1 codec and the conversion to HTTP types, this handler
/// answers a 1.0 request in 1.0 — NIO's encoder then frames the body for it (never chunked) — and closes the
/// connection after the answer unless the request asked for `Connection: keep-alive`, which the answer acknowledges.
/// Requests are answered in order, so the versions wait in a queue until their answers begin.
final class HTTP10ResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request's version and whether its connection stays open after the answer.
    private struct Asked {
        var isHTTP10: Bool
        var keepAlive: Bool
    }

    /// Requests whose answers have not begun.
    private var asked = CircularBuffer<Asked>(initialCapacity: 2)
    /// The answer being written: a 1.0 one that closes the connection at its end.
    private var closeAfterAnswer = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let isHTTP10 = head.version.major == 1 && head.version.minor == 0
            asked.append(Asked(isHTTP10: isHTTP10, keepAlive: isHTTP10 ? head.isKeepAlive : true))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            let request = asked.popFirst() ?? Asked(isHTTP10: false, keepAlive: true)
            guard request.isHTTP10 else {
                context.write(data, promise: promise)
                return
            }
            head.version = .http1_0
            head.headers.replaceOrAdd(name: "Connection", value: request.keepAlive ? "keep-alive" : "close")
            closeAfterAnswer = !request.keepAlive
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAfterAnswer:
            closeAfterAnswer = false
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }
}

/// A plain HTTP/1 connection (`Inner`, Hummingbird's `HTTP1Channel` or a wrapper of it) with an
/// ``HTTP10ResponseHandler`` in front of the conversion to HTTP types.
struct HTTP10Channel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    /// The deadline of a request's body after its head (``RequestBodyDeadlineHandler``); `nil`: none.
    var bodyTimeout: TimeAmount? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try HTTP10ResponseHandler.add(to: channel.pipeline.syncOperations)
            if let bodyTimeout { try RequestBodyDeadlineHandler.add(to: channel.pipeline.syncOperations, timeout: bodyTimeout, logger: logger) }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// A TLS connection (Hummingbird's `HTTP2UpgradeChannel`) whose HTTP/1.1 pipeline, when ALPN chose it or chose
/// nothing, gets an ``HTTP10ResponseHandler`` as a plain one does; one that negotiated HTTP/2 is left as it is. The
/// handler is added when the negotiation's result is announced, which NIO does before it lets the requests it
/// held during the handshake through, so that it sees the first request too.
struct HTTP10UpgradeChannel: ServerChildChannel {
    typealias Value = HTTP2UpgradeChannel.Value
    /// The negotiation handler `HTTP2UpgradeChannel` puts in the pipeline.
    typealias Negotiation = NIOTypedApplicationProtocolNegotiationHandler<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>>

    let inner: HTTP2UpgradeChannel
    /// The deadline of a request's body after its head on an HTTP/1.1 connection (``RequestBodyDeadlineHandler``).
    var bodyTimeout: TimeAmount? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [bodyTimeout] value in
            let negotiation = try channel.pipeline.syncOperations.handler(type: Negotiation.self)
            negotiation.protocolNegotiationResult.assumeIsolated().whenSuccess { version in
                guard case .http1_1 = version else { return }
                do {
                    try HTTP10ResponseHandler.add(to: channel.pipeline.syncOperations)
                    if let bodyTimeout { try RequestBodyDeadlineHandler.add(to: channel.pipeline.syncOperations, timeout: bodyTimeout, logger: logger) }
                } catch {
                    logger.debug("HTTP/1.0 handling not added to a TLS connection: \(error)")
                }
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTP10ResponseHandler {
    /// Adds a handler before the pipeline's conversion of HTTP/1 parts to HTTP types.
    static func add(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        try pipeline.addHandler(HTTP10ResponseHandler(), position: .before(codec))
    }
}
