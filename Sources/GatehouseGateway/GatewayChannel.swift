import GatehouseHTTP
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// A gateway connection's pipeline: TLS when the gateway has it (`https`, `wss`), then one ``GatewayHTTPHandler``,
/// which reads the client's bytes itself and serves every request on the connection's event loop — its own endpoints,
/// refusals, the relay to upstreams, WebSocket handshakes (it leaves the pipeline to a ``WebSocketBridge`` or KAAZING's
/// handshake after a `101`) and KAAZING's emulated WebSockets. There is no other request path: no HTTP codec objects,
/// no task per connection.
struct GatewayChannel: ServerChildChannel {
    /// A connection the gateway serves.
    struct Connection: ServerChildChannelValue {
        let channel: any Channel
    }

    let gateway: Gateway
    /// TLS for the connection, in front of everything else; `nil` for plain HTTP.
    var sslContext: NIOSSLContext? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        let statistics = gateway.statistics
        statistics.connectionOpened()
        channel.closeFuture.whenComplete { _ in statistics.connectionClosed() }
        do {
            let operations = channel.pipeline.syncOperations
            if let sslContext {
                let handler = gateway.clientCertificates
                    ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: ReloadableTLS.acceptAnyClientCertificate)
                    : NIOSSLServerHandler(context: sslContext)
                try operations.addHandler(handler)
            }
            try operations.addHandler(GatewayHTTPHandler(gateway: gateway))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.eventLoop.makeSucceededFuture(Connection(channel: channel))
    }

    /// Nothing to do: the connection's handlers serve it on its event loop until it closes.
    func handle(value: Connection, logger: Logger) async {}
}
