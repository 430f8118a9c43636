import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The gateway's request context: it supports WebSocket upgrades and knows its connection, so that the
/// answer decided while checking an upgrade is the one the HTTP side sends.
public struct GatewayRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<GatewayRequestContext>
    /// The connection the request came on.
    let channel: any Channel
    var connection: ObjectIdentifier { ObjectIdentifier(channel) }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}
