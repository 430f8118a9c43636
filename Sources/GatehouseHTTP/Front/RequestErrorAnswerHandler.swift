package import NIOCore
package import NIOHTTP1

/// Answers a request that NIO's HTTP/1 decoder cannot read with a JSON error, as every other error of the server is
/// answered: `431` for a head over the decoder's bound, `400` for anything else it cannot parse (a malformed request
/// line, field or length), then `Connection: close`. The connection is closed the lingering way (``LingeringClose``), so
/// a client still sending its long head reads the answer instead of a reset. In place of NIO's
/// `HTTPServerProtocolErrorHandler`, which answers `400` with no body and lets the connection be closed at once.
///
/// NIO's pipelining handler, before this one, holds the error until an answer in progress has ended; an answer the
/// rest of the pipeline began and did not end (it cannot be completed now) only closes the connection.
package final class RequestErrorAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// An answer begun (its head written) and not yet ended.
    private var answering = false
    /// The connection is ending after a request that could not be read: later reads and errors are dropped.
    private var ending = false

    package init() {}

    /// The status and JSON body for a request the decoder could not read.
    package static func answer(for error: HTTPParserError) -> (status: HTTPResponseStatus, body: String) {
        if case .headerOverflow = error {
            return (.requestHeaderFieldsTooLarge,
                    #"{"errorCode":"REQUEST_HEADER_FIELDS_TOO_LARGE","errorMsg":"The request head is larger than the server reads."}"#)
        }
        return (.badRequest, #"{"errorCode":"BAD_REQUEST","errorMsg":"The request could not be read as HTTP/1.1."}"#)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ending else { return }
        context.fireChannelRead(data)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !ending else { return }
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        ending = true
        guard !answering else {
            context.close(promise: nil)
            return
        }
        let (status, body) = Self.answer(for: error)
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: [
            "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store",
            "Content-Length": String(body.utf8.count), "Connection": "close",
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        LingeringClose.answerAndClose(context, wrapOutboundOut(.end(nil)))
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: answering = true
        case .end: answering = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }
}
