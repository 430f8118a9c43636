package import Logging
package import NIOCore

/// Closes a new connection whose first request head (request line and header fields, up to the empty line) has
/// not arrived within the timeout of the connection's opening, after a `408` with a JSON error: a client that opens connections and sends half a
/// request line, or one byte now and then, holds them for that long at most (slowloris).
///
/// It sits first in the connection's pipeline, on raw bytes, before any HTTP parsing (`serve`'s front; the gateway
/// keeps its own progress in its connection machine). After the first head it removes itself: from then on the idle
/// timeout closes a keep-alive connection that sits idle or stalls in a later head or body, and an upgraded WebSocket lives until
/// either side closes it.
package final class RequestHeadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// A `408 Request Timeout` with `body` (JSON) and `Connection: close`, as raw bytes.
    package static func timeoutAnswer(body: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        let head = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        var buffer = allocator.buffer(capacity: head.utf8.count + body.utf8.count)
        buffer.writeString(head)
        buffer.writeString(body)
        return buffer
    }

    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let logger: Logger
    private let progress: FirstRequestProgress
    /// The JSON body of the `408`.
    private let answerBody: String
    private var scheduled: Scheduled<Void>?
    private var scanner = HeadEndScanner()

    /// - Parameter answerBody: the JSON body of the `408` (the server's or the gateway's error shape).
    package init(timeout: TimeAmount, progress: FirstRequestProgress, answerBody: String, logger: Logger) {
        self.answerBody = answerBody
        self.timeout = timeout
        self.progress = progress
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        scheduled?.cancel()
        scheduled = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        scheduled?.cancel()
        scheduled = nil
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let complete = scanner.consume(buffer.readableBytesView)
        context.fireChannelRead(data)
        if complete {
            progress.headReceived = true
            scheduled?.cancel()
            scheduled = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard scheduled == nil else { return }
        let logger = logger
        let timeout = timeout
        let progress = progress
        let answerBody = answerBody
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard !progress.answered else { return }
            progress.answered = true
            logger.debug("closing a connection whose request head did not arrive in time",
                         metadata: ["timeout": .stringConvertible(timeout)])
            // First in the pipeline: these bytes go straight to the socket, whatever the HTTP handlers' state.
            LingeringClose.answerAndClose(context, NIOAny(Self.timeoutAnswer(body: answerBody, allocator: context.channel.allocator)))
        }
    }
}

/// Finds the end of an HTTP/1.1 request head in a byte stream: the first empty line after a non-empty one (`CR`
/// is ignored, so bare `LF` line ends count too; empty lines before the request line are skipped, RFC 9112 §2.2).
struct HeadEndScanner {
    private var lineHasContent = false
    private var sawLine = false
    private(set) var isComplete = false

    /// Reads `bytes`; `true` once the head is complete.
    mutating func consume(_ bytes: some Sequence<UInt8>) -> Bool {
        guard !isComplete else { return true }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"):
                if lineHasContent {
                    sawLine = true
                    lineHasContent = false
                } else if sawLine {
                    isComplete = true
                    return true
                }
            case UInt8(ascii: "\r"):
                break
            default:
                lineHasContent = true
            }
        }
        return false
    }
}
