package import Logging
package import NIOCore
package import NIOHTTP1
import NIOHTTPTypesHTTP1

/// HTTP/1.0 clients answered as RFC 9112 §9.3 asks: the HTTP types the router takes carry no version, so every answer went
/// out as `HTTP/1.1` on a connection left open, and a 1.0 client that waits for the close (ApacheBench, health
/// checkers, old proxies) waited forever. Between NIO's HTTP/1 codec and the conversion to HTTP types, this handler
/// answers a 1.0 request in 1.0 — NIO's encoder then frames the body for it (never chunked) — and closes the
/// connection after the answer unless the request asked for `Connection: keep-alive`, which the answer acknowledges.
/// Requests are answered in order, so the versions wait in a queue until their answers begin.
package final class HTTP10ResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// A request's version and whether its connection stays open after the answer.
    private struct Asked {
        var isHTTP10: Bool
        var keepAlive: Bool
    }

    /// Requests whose answers have not begun.
    private var asked = CircularBuffer<Asked>(initialCapacity: 2)
    /// The answer being written: a 1.0 one that closes the connection at its end.
    private var closeAfterAnswer = false

    package init() {}

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let isHTTP10 = head.version.major == 1 && head.version.minor == 0
            asked.append(Asked(isHTTP10: isHTTP10, keepAlive: isHTTP10 ? head.isKeepAlive : true))
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
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

extension HTTP10ResponseHandler {
    /// Adds a handler before the pipeline's conversion of HTTP/1 parts to HTTP types.
    package static func add(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        try pipeline.addHandler(HTTP10ResponseHandler(), position: .before(codec))
    }
}
