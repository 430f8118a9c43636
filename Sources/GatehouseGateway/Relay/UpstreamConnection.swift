import NIOCore

/// Where an upstream connection goes: the pool keeps idle connections apart by it.
struct UpstreamKey: Hashable, Sendable {
    var host: String
    var port: Int
    var tls: Bool
}

/// What an upstream connection tells the exchange it currently serves (``GatewayHTTPHandler``). All calls come on
/// the connection's event loop, which is the client connection's.
protocol UpstreamExchange: AnyObject {
    /// The answer's head (not an informational one): where its parts are in `bytes`, which are its bytes.
    func upstreamHead(_ head: HTTPMessageHead, bytes: ByteBuffer)
    /// Bytes of the answer's body as they came (with their chunks' framing), or only its chunks' data when the
    /// connection was asked to take the framing off (``UpstreamResponseHandler/dechunk``).
    func upstreamBody(_ bytes: ByteBuffer)
    /// The answer is complete; `reusable` is `false` when the connection must not carry another exchange (bytes came
    /// after the answer's end, or the answer ended with the connection).
    func upstreamEnd(reusable: Bool)
    /// The end of one read of the upstream's socket: time to flush towards the client.
    func upstreamReadComplete()
    /// The connection closed, failed or timed out (`timedOut`: silent past the read timeout, closed by the gateway)
    /// before the exchange released it.
    func upstreamFailed(timedOut: Bool)
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

    /// Sends bytes of the request (not flushed).
    func write(_ bytes: ByteBuffer) { handler.write(bytes) }

    func flush() { handler.flush() }

    /// Whether the socket takes more request bytes now.
    var isWritable: Bool { handler.isWritable }

    /// Closes the connection, telling no exchange.
    func close() {
        handler.exchange = nil
        channel.close(promise: nil)
    }
}
