import NIOCore

/// A connection carrying an ``EmulatedWebSocket``'s downstream response, once its head is written: the session
/// writes the frames on the channel; this handler tells it when the connection ends or its socket fills and drains.
/// The client sends nothing more on it (its request said `Connection: close` was answered); what it sends is dropped.
final class EmulatedDownstreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let session: EmulatedWebSockets.Entry

    /// The client's `.kb`: the most one response should carry, in kilobytes.
    private let kilobytes: Int?

    init(session: EmulatedWebSockets.Entry, kilobytes: Int?) {
        self.session = session
        self.kilobytes = kilobytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        if channel.isActive {
            let kilobytes = self.kilobytes
            session.execute { $0.downstreamAttached(channel, kilobytes: kilobytes) }
        } else {
            session.execute { $0.downstreamDetached(channel) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { session.execute { $0.downstreamDrained() } }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let channel = context.channel
        session.execute { $0.downstreamDetached(channel) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
