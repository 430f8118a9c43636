import NIOCore
import NIOHTTP1

/// Where an upstream connection goes: the pool keeps idle connections apart by it.
struct UpstreamKey: Hashable, Sendable {
    var host: String
    var port: Int
    var tls: Bool
}

/// What an upstream connection tells the exchange it currently serves (``GatewayHTTPHandler``). All calls come on
/// the connection's event loop, which is the client connection's.
protocol UpstreamExchange: AnyObject {
    /// A part of the upstream's answer.
    func upstreamRead(_ part: HTTPClientResponsePart)
    /// The end of one read of the upstream's socket: time to flush towards the client.
    func upstreamReadComplete()
    /// The connection closed, failed or timed out before the exchange released it.
    func upstreamFailed()
    /// The connection can take more of the request body (or can take no more for now).
    func upstreamWritabilityChanged()
}

/// One keep-alive HTTP/1.1 connection to an upstream, owned by one event loop's ``UpstreamConnectionPool``: lent to
/// one exchange at a time, its handler relays the answer's parts to that exchange.
final class UpstreamConnection {
    let channel: any Channel
    let handler: UpstreamResponseHandler
    /// Exchanges this connection has served (a reused one may have been closed by the upstream meanwhile).
    var exchanges = 0
    /// When the connection went back to the pool (its pool closes it once idle too long).
    var idleSince = NIODeadline.now()

    init(channel: any Channel, handler: UpstreamResponseHandler) {
        self.channel = channel
        self.handler = handler
    }

    /// Where it goes (its handler knows: the pool forgets a closed connection by its handler).
    var key: UpstreamKey { handler.key }

    /// Sends a part of the request (not flushed).
    func write(_ part: HTTPClientRequestPart) { handler.write(part) }

    func flush() { handler.flush() }

    /// Whether the socket takes more request bytes now.
    var isWritable: Bool { channel.isWritable }

    /// Closes the connection, telling no exchange.
    func close() {
        handler.exchange = nil
        channel.close(promise: nil)
    }
}

/// The last handler of an upstream connection's pipeline (after TLS and NIO's HTTP client codec): hands the
/// answer's parts to the connection's current exchange, and holds the socket's reads while the client cannot take
/// more (backpressure), so that a large answer streams at the client's pace without piling up in memory.
final class UpstreamResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// Where the connection goes.
    let key: UpstreamKey
    /// The exchange served now; `nil` while idle in the pool.
    var exchange: (any UpstreamExchange)?
    /// Called once when the connection closes (the pool forgets it), with this handler.
    var onClose: ((UpstreamResponseHandler) -> Void)?
    private var context: ChannelHandlerContext?
    private var reads = ReadGate()

    init(key: UpstreamKey) { self.key = key }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func write(_ part: HTTPClientRequestPart) {
        guard let context else { return }
        context.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() { context?.flush() }

    /// Stops reading the upstream's socket until ``resumeReads()``.
    func pauseReads() { reads.pause() }

    func resumeReads() { reads.resume(context) }

    func read(context: ChannelHandlerContext) { reads.read(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange else {
            // An idle connection that speaks: nothing to relay it to, and its state is unknown.
            context.close(promise: nil)
            return
        }
        exchange.upstreamRead(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange?.upstreamWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let exchange = self.exchange
        self.exchange = nil
        exchange?.upstreamFailed()
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS or parse failure: the connection is unusable; the exchange learns it from the close.
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The read timeout (an `IdleStateHandler` in front): an upstream that stays silent mid-answer, or an idle one.
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
