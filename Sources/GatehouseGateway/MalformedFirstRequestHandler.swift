import GatehouseHTTP
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Answers a connection's first request when NIO refuses it before Hummingbird sees it, then closes the connection
/// (``LingeringClose``): `400` (JSON) for a request its HTTP/1.1 parser refuses (`GARBAGE`, a space or a non-ASCII
/// byte in the request line, a malformed header field), `431` for a head over ``RequestHeadLimits``, `400` for a
/// WebSocket upgrade its upgrader refuses (no `Sec-WebSocket-Key`, a version other than 13, a body).
///
/// Hummingbird answers such requests only once one has reached its HTTP handler; before that, on a connection
/// that may still be upgraded to a WebSocket, the error reaches no one and the connection stays open and silent,
/// or is closed without a word. This handler sits right behind the upgrader: an error that reaches it before any
/// message did comes from the first request, and so does a close of a connection whose first head arrived but
/// which wrote nothing; it answers both. The first message that passes through it (the first request's head,
/// handed on to Hummingbird) or a completed upgrade means Hummingbird is in charge from then on, and it removes
/// itself. In front of a ``GatewayHTTPHandler`` (which reads and refuses requests itself) it sees only a first
/// request that handler hands to Hummingbird (an upgrade it does not bridge), and leaves with the upgrader otherwise.
final class MalformedFirstRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    /// Never unwrapped: it only passes messages on.
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = HTTPServerResponsePart

    private let logger: Logger
    private let progress: FirstRequestProgress
    /// Something was written towards the client (a refused upgrade's answer, a WebSocket's frames).
    private var wrote = false

    init(progress: FirstRequestProgress, logger: Logger) {
        self.progress = progress
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        // Upgraded: the WebSocket is in charge.
        if event is HTTPServerUpgradeEvents { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        wrote = true
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A refused upgrade (`unsupportedWebSocketTarget`) is answered by Hummingbird and `RefusedUpgradeAnswers`.
        let malformed = error is HTTPParserError || (error as? NIOWebSocketUpgradeError) == .invalidUpgradeHeader
            || (error as? HTTPServerUpgradeErrors) == .invalidHTTPOrdering
        guard malformed, !progress.answered, !wrote else {
            context.fireErrorCaught(error)
            return
        }
        logger.debug("refused a first request", metadata: ["error": .string("\(error)")])
        answer(context, overflow: (error as? HTTPParserError) == .headerOverflow)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Closed by the upgrader's failure (an upgrade request with a body, ...) before anything was said.
        if mode == .all, progress.headReceived, !progress.answered, !wrote {
            logger.debug("refused a first request that the upgrader dropped")
            answer(context, overflow: false)
            promise?.succeed()
            return
        }
        context.close(mode: mode, promise: promise)
    }

    private func answer(_ context: ChannelHandlerContext, overflow: Bool) {
        progress.answered = true
        let answer = overflow
            ? GatewayAnswer.invalidRequest("the request head is larger than the gateway accepts", status: 431)
            : GatewayAnswer.invalidRequest("the request is not a valid HTTP/1.1 request")
        var headers = HTTPHeaders()
        for field in answer.headers { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: answer.status.code), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        LingeringClose.answerAndClose(context, wrapOutboundOut(.end(nil)))
    }
}
