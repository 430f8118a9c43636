import GatehouseHTTP
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// The gateway's connections: Hummingbird's HTTP/1.1 + WebSocket upgrade channel, with two guards for the first
/// request, where Hummingbird has none: a ``RequestHeadTimeoutHandler`` in front (slowloris) and a
/// ``MalformedFirstRequestHandler`` behind the upgrader (a first request that is not HTTP/1.1 would otherwise
/// leave the connection open and silent forever); and every connection is closed once Hummingbird is done with it.
/// With a `gateway`, its plain HTTP is served by a ``GatewayHTTPHandler`` in front of NIO's HTTP codec and the upgrader,
/// on the event loop; Hummingbird gets the connections whose first request asks for an upgrade it does not bridge.
struct GatewayChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let headerReadTimeout: TimeAmount
    /// TLS for the connection (`https`, `wss`), in front of everything else; `nil` for plain HTTP.
    var sslContext: NIOSSLContext? = nil
    /// Whether the TLS handshake asks for a client certificate (any is accepted: ``ReloadableTLS/acceptAnyClientCertificate``).
    var clientCertificates = false
    /// Counts connections, open and accepted.
    var statistics: GatewayStatistics? = nil
    /// The gateway whose plain HTTP a ``GatewayHTTPHandler`` serves on the event loop, in front of NIO's HTTP codec;
    /// `nil`: Hummingbird serves every request.
    var gateway: Gateway? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let statistics {
            statistics.connectionOpened()
            channel.closeFuture.whenComplete { _ in statistics.connectionClosed() }
        }
        let progress = FirstRequestProgress()
        do {
            if let sslContext {
                let handler = clientCertificates
                    ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: ReloadableTLS.acceptAnyClientCertificate)
                    : NIOSSLServerHandler(context: sslContext)
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            }
            // After TLS, so that it reads the request head, not ciphertext.
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadTimeoutHandler(timeout: headerReadTimeout, progress: progress,
                                          answerBody: GatewayAnswer.invalidRequest("the request head did not arrive in time").bodyText,
                                          logger: logger), position: .last)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let loopBound = NIOLoopBound(progress, eventLoop: channel.eventLoop)
        let gateway = self.gateway
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            if let gateway {
                // In front of NIO's HTTP codec: it reads the client's bytes itself, and hands them to the codec only
                // for an upgrade it leaves to Hummingbird.
                let encoder = try operations.handler(type: HTTPResponseEncoder.self)
                try operations.addHandler(GatewayHTTPHandler(gateway: gateway, progress: loopBound.value), position: .before(encoder))
            }
            try operations.addHandler(MalformedFirstRequestHandler(progress: loopBound.value, logger: logger), position: .last)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: ClientCausedErrorLogHandler.demoting(logger))
        // A connection the gateway's own handlers serve (plain HTTP, a KAAZING handshake, a WebSocket bridged on the
        // event loop) lives on without Hummingbird's task.
        let channel = value.channel
        let pipeline = channel.pipeline
        let owned = pipeline.handler(type: GatewayHTTPHandler.self).map { _ in true }
            .flatMapError { _ in pipeline.handler(type: KaazingHandshakeHandler.self).map { _ in true } }
            .flatMapError { _ in pipeline.handler(type: WebSocketSideHandler.self).map { _ in true } }
            .flatMapError { _ in pipeline.handler(type: EmulatedDownstreamHandler.self).map { _ in true } }
            .recover { _ in false }
        if (try? await owned.get()) == true { return }
        // Nothing serves the connection any more. Hummingbird leaves it open when the upgrader failed (a refused
        // upgrade that carries a body): closing it here lets the first-request guard answer and frees it.
        channel.close(promise: nil)
    }
}
