import NIOCore
import NIOHTTP1
import NIOWebSocket

/// SwiftNIO's `NIOWebSocketClientUpgrader` (the key sent, the server's `Sec-WebSocket-Accept` checked), with the
/// WebSocket frame codec put in front of ``GatewayWebSocketChannelHandler`` rather than after it, so that the one
/// handler that read the HTTP response reads the frames too.
final class GatewayWebSocketUpgrader: NIOHTTPClientProtocolUpgrader {
    let supportedProtocol = "websocket"
    let requiredUpgradeHeaders: [String] = []
    private let upgrader: NIOWebSocketClientUpgrader
    private let maxFrameSize: Int
    private let handler: GatewayWebSocketChannelHandler

    init(maxFrameSize: Int, handler: GatewayWebSocketChannelHandler) {
        // The pipeline is set up here; NIO's upgrader only keys the request and checks the answer.
        upgrader = NIOWebSocketClientUpgrader(maxFrameSize: maxFrameSize) { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
        self.maxFrameSize = maxFrameSize
        self.handler = handler
    }

    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        upgrader.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        upgrader.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
    }

    func upgrade(context: ChannelHandlerContext, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Void> {
        context.eventLoop.makeCompletedFuture {
            try context.pipeline.syncOperations.addHandlers(
                [WebSocketFrameEncoder(), ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)), GatewayWebSocketFrameTagger()],
                position: .before(handler)
            )
            handler.upgraded(upgradeResponse)
        }
    }
}
