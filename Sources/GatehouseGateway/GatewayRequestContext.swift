import Hummingbird
import HummingbirdWebSocket

/// The gateway's request context: it supports WebSocket upgrades and knows its connection, so that the
/// answer decided while checking an upgrade is the one the HTTP side sends.
public struct GatewayRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<GatewayRequestContext>
    /// The connection the request came on.
    let connection: ObjectIdentifier

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        connection = ObjectIdentifier(source.channel)
    }
}
