import NIOCore
import NIOHTTP1
import NIOWebSocket

/// What reaches ``GatewayWebSocketChannelHandler`` from the pipeline: a response part before the upgrade, a frame
/// after it (one handler sees both, so one state machine runs the whole connection).
enum GatewayWebSocketChannelEvent {
    case response(HTTPClientResponsePart)
    case frame(WebSocketFrame)
}

/// Hands the HTTP decoder's response parts on as ``GatewayWebSocketChannelEvent/response(_:)``; removed with the HTTP
/// handlers at the upgrade.
final class GatewayHTTPResponseTagger: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = GatewayWebSocketChannelEvent

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(wrapInboundOut(.response(unwrapInboundIn(data))))
    }
}

/// Hands the frame decoder's frames on as ``GatewayWebSocketChannelEvent/frame(_:)``; added at the upgrade.
final class GatewayWebSocketFrameTagger: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = GatewayWebSocketChannelEvent

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(wrapInboundOut(.frame(unwrapInboundIn(data))))
    }
}
