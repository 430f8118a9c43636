package import Logging
package import NIOCore
package import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Closes a connection whose request body has not all arrived within a deadline of its head: a body sent a byte now
/// and then (one per 1.2 s kept a connection 30 s with `--idle-timeout 2`: the idle timer restarts at every byte;
/// issue 54, finding 12). Bodies are small (64 KiB at most), so the deadline is the header-read timeout's: a client
/// that cannot send 64 KiB in that time is treated as one that cannot send its head. It sits between NIO's HTTP/1
/// codec and the conversion to HTTP types, for every request of the connection, plain or TLS (HTTP/1.1).
package final class RequestBodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart

    private let timeout: TimeAmount
    private let logger: Logger
    private var scheduled: Scheduled<Void>?

    package init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            arm(context)
        case .end:
            scheduled?.cancel()
            scheduled = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        scheduled?.cancel()
        scheduled = nil
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        scheduled?.cancel()
        scheduled = nil
    }

    private func arm(_ context: ChannelHandlerContext) {
        scheduled?.cancel()
        let logger = logger, timeout = timeout
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            scheduled = nil
            logger.debug("closing a connection whose request body did not arrive in time", metadata: ["timeout": .stringConvertible(timeout)])
            context.close(promise: nil)
        }
    }

    /// Adds a handler before the pipeline's conversion of HTTP/1 parts to HTTP types.
    package static func add(to pipeline: ChannelPipeline.SynchronousOperations, timeout: TimeAmount, logger: Logger) throws {
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        try pipeline.addHandler(RequestBodyDeadlineHandler(timeout: timeout, logger: logger), position: .before(codec))
    }
}
