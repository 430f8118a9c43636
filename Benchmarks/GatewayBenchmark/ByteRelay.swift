import NIOCore
import NIOPosix

/// The floor of any proxy written on SwiftNIO: bytes relayed between a client's socket and its own upstream
/// connection on one event loop, as they are read — no HTTP or WebSocket parsing, no routing, no authentication, no
/// pooling. It runs in the gateway's process, on the gateway's event loops, so that its CPU per request is measured
/// alike; what the gateway costs above it is Gatehouse's, what it costs above nginx is NIO's.
enum ByteRelay {
    /// Listens on 127.0.0.1 (a free port) and relays every accepted connection to `upstreamHost:upstreamPort`.
    static func start(upstreamHost: String, upstreamPort: Int, group: any EventLoopGroup) async throws -> any Channel {
        try await RelayServer.start(upstreamHost: upstreamHost, upstreamPort: upstreamPort, group: group) { client, upstream in
            let (toUpstream, toClient) = Glue.pair()
            try client.pipeline.syncOperations.addHandler(toUpstream)
            try upstream.pipeline.syncOperations.addHandler(toClient)
        }
    }

    /// One end of the relay: what its channel reads is written to its partner's channel, flushed when the read
    /// completes; reads stop while the partner's socket is full; either side's close closes the other.
    final class Glue: ChannelDuplexHandler {
        typealias InboundIn = NIOAny
        typealias OutboundIn = NIOAny
        typealias OutboundOut = NIOAny

        private var partner: Glue?
        private var context: ChannelHandlerContext?
        private var pendingRead = false

        static func pair() -> (Glue, Glue) {
            let first = Glue(), second = Glue()
            first.partner = second
            second.partner = first
            return (first, second)
        }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            partner = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }

        func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }

        func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { partner?.resumeRead() }
        }

        func read(context: ChannelHandlerContext) {
            if partner?.context?.channel.isWritable ?? true {
                context.read()
            } else {
                pendingRead = true
            }
        }

        private func resumeRead() {
            guard pendingRead, let context else { return }
            pendingRead = false
            context.read()
        }
    }
}
