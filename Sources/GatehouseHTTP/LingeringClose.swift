package import NIOCore

/// Closes a connection after an error answer the way HTTP servers must (RFC 9112 §9.6): this side first
/// (`FIN`), so that the client reads the whole answer, then the rest after `linger`. Closing at once while the
/// client is still sending (a long head, a body) makes the kernel send `RST`, and the client may lose the answer.
package enum LingeringClose {
    /// How long the client's remaining bytes are read and dropped before the connection is closed.
    package static let linger: TimeAmount = .seconds(2)

    /// Writes `data` from `context` (`nil`: nothing), then closes the output, then the connection after ``linger``
    /// (or as soon as the client closes its side).
    package static func answerAndClose(_ context: ChannelHandlerContext, _ data: NIOAny?) {
        let written: EventLoopFuture<Void>
        if let data {
            written = context.writeAndFlush(data)
        } else {
            written = context.eventLoop.makeSucceededVoidFuture()
        }
        written.assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
            context.eventLoop.assumeIsolated().scheduleTask(in: linger) { context.close(promise: nil) }
        }
    }
}
