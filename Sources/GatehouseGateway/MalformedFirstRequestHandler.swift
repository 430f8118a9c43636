import Logging
import NIOCore
import NIOHTTP1

/// Answers `400` (JSON, `Connection: close`) to a connection whose first request NIO's HTTP/1.1 parser refuses
/// (`GARBAGE`, a space or a non-ASCII byte in the request line, a malformed header field), and closes it.
///
/// Hummingbird answers parse errors only once a request has reached its HTTP handler; before that, on a
/// connection that may still be upgraded to a WebSocket, the error reaches no one and the connection stays open
/// and silent. This handler sits right behind the upgrader: an error that reaches it before any message did
/// comes from the first request, and it answers; the first message that passes through it (the first request's
/// head, handed on to Hummingbird, or the first WebSocket data) means Hummingbird is in charge from then on, and
/// it removes itself.
final class MalformedFirstRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// Never unwrapped: it only passes messages on.
    typealias InboundIn = NIOAny
    typealias OutboundOut = HTTPServerResponsePart

    private let logger: Logger
    private var answered = false

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !answered else {
            context.fireErrorCaught(error)
            return
        }
        answered = true
        logger.debug("refused a request that is not HTTP/1.1", metadata: ["error": .string("\(error)")])
        let answer = GatewayAnswer.invalidRequest("the request is not a valid HTTP/1.1 request")
        var headers = HTTPHeaders()
        for field in answer.headers { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: answer.status.code), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
