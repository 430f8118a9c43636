import GatehouseHTTP
import NIOCore
import NIOSSL

/// A gateway connection's pipeline: TLS when the gateway has it (`https`, `wss`), then one ``GatewayHTTPHandler``,
/// which reads the client's bytes itself and serves every request on the connection's event loop — its own endpoints,
/// refusals, the relay to upstreams, WebSocket handshakes (it leaves the pipeline to a ``WebSocketBridge`` or KAAZING's
/// handshake after a `101`) and KAAZING's emulated WebSockets. There is no other request path: no HTTP codec objects,
/// no task per connection or request.
struct GatewayChannel: Sendable {
    let gateway: Gateway
    /// TLS for the connection, in front of everything else; `nil` for plain HTTP.
    let sslContext: NIOSSLContext?

    /// Sets up an accepted connection, on its event loop.
    func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        let statistics = gateway.statistics
        statistics.connectionOpened()
        channel.closeFuture.whenComplete { _ in statistics.connectionClosed() }
        return channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            if let sslContext {
                let handler = gateway.clientCertificates
                    ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: ReloadableTLS.acceptAnyClientCertificate)
                    : NIOSSLServerHandler(context: sslContext)
                try operations.addHandler(handler)
            }
            try operations.addHandler(GatewayHTTPHandler(gateway: gateway))
        }
    }
}
