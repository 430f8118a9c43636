import NIOCore
import NIOHTTP1
import NIOPosix

/// The floor of an HTTP proxy built on NIO's HTTP/1.1 codec, as the gateway is: each client connection has its own
/// upstream connection on its event loop, and the parts NIO's decoders make of each message (head, body, end) are
/// handed to the other side's encoder as they come — no routing, no admission, no header rules, no pooling. Beside
/// ``ByteRelay`` it tells what the codec costs from what the gateway's own work costs.
enum HTTPPartsRelay {
    /// Listens on 127.0.0.1 (a free port) and relays every accepted connection's requests to
    /// `upstreamHost:upstreamPort`.
    static func start(upstreamHost: String, upstreamPort: Int, group: any EventLoopGroup) async throws -> any Channel {
        try await RelayServer.start(upstreamHost: upstreamHost, upstreamPort: upstreamPort, group: group) { client, upstream in
            let toClient = ToClient()
            let toUpstream = ToUpstream(upstream: upstream, toClient: toClient)
            try upstream.pipeline.syncOperations.addHTTPClientHandlers()
            try upstream.pipeline.syncOperations.addHandler(toClient)
            try client.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false)
            try client.pipeline.syncOperations.addHandler(toUpstream)
        }
    }

    /// The client's side: request parts written to the upstream, flushed when a read completes.
    final class ToUpstream: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        private let upstream: any Channel
        private let toClient: ToClient

        init(upstream: any Channel, toClient: ToClient) {
            self.upstream = upstream
            self.toClient = toClient
        }

        func handlerAdded(context: ChannelHandlerContext) { toClient.client = context }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part: HTTPClientRequestPart = switch unwrapInboundIn(data) {
            case .head(let head): .head(head)
            case .body(let body): .body(.byteBuffer(body))
            case .end(let trailers): .end(trailers)
            }
            upstream.pipeline.syncOperations.write(NIOAny(part), promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) { upstream.pipeline.syncOperations.flush() }

        func channelInactive(context: ChannelHandlerContext) { upstream.close(promise: nil) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    /// The upstream's side: answer parts written to the client, flushed when a read completes.
    final class ToClient: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        var client: ChannelHandlerContext?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part: HTTPServerResponsePart = switch unwrapInboundIn(data) {
            case .head(let head): .head(head)
            case .body(let body): .body(.byteBuffer(body))
            case .end(let trailers): .end(trailers)
            }
            client?.write(NIOAny(part), promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) { client?.flush() }

        func channelInactive(context: ChannelHandlerContext) { client?.close(promise: nil) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }
}
