import GatehouseClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Opens one connection and asks for the upgrade: TCP (within the connect timeout), TLS for `wss` (SNI, the host
/// name checked), then SwiftNIO's HTTP/1 client upgrade with ``GatewayWebSocketUpgrader``. The pipeline before the
/// upgrade: TLS, request encoder, response decoder, `NIOHTTPClientUpgradeHandler`, ``GatewayHTTPResponseTagger``,
/// ``GatewayWebSocketChannelHandler``; after it: TLS, frame encoder and decoder, ``GatewayWebSocketFrameTagger``, the
/// same handler.
enum GatewayWebSocketConnector {
    /// The connection open, or the server's refusal (the connection then closed).
    static func open(_ url: GatewayWebSocketURL, configuration: GatewayWebSocketConfiguration,
                     group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> GatewayWebSocketOutcome {
        let sslContext = url.secure ? try NIOSSLContext(configuration: configuration.tls) : nil
        let serverName = configuration.serverName ?? (url.hostIsAddress ? nil : url.host)
        let eventLoop = group.next()
        let handshake = eventLoop.makePromise(of: GatewayWebSocketChannelHandler.Handshake.self)
        let closed = eventLoop.makePromise(of: GatewayWebSocketCloseFrame?.self)
        let (messages, continuation) = AsyncThrowingStream<GatewayWebSocketMessage, any Error>.makeStream()
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    let handler = GatewayWebSocketChannelHandler(url: url, configuration: configuration, handshake: handshake,
                                                                 closed: closed, messages: continuation)
                    let encoder = HTTPRequestEncoder()
                    let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
                    let tagger = GatewayHTTPResponseTagger()
                    let upgrade = NIOHTTPClientUpgradeHandler(
                        upgraders: [GatewayWebSocketUpgrader(maxFrameSize: configuration.maxFrameSize, handler: handler)],
                        httpHandlers: [encoder, decoder, tagger], upgradeCompletionHandler: { _ in }
                    )
                    try pipeline.addHandlers([encoder, decoder, upgrade, tagger, handler])
                    channel.closeFuture.whenComplete { _ in
                        // Never left waiting, whatever happened to the pipeline.
                        handshake.fail(GatewayClientError.transport("the connection to \(url.hostField) closed"))
                        closed.succeed(nil)
                        continuation.finish()
                    }
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: url.host, port: url.port).get()
        } catch {
            continuation.finish()
            handshake.fail(error)
            closed.succeed(nil)
            throw error
        }
        switch try await handshake.futureResult.get() {
        case .refused(let refusal):
            return .refused(refusal)
        case .opened(let selectedProtocol):
            return .upgraded(GatewayWebSocketConnection(
                messages: messages, outbound: GatewayWebSocketWriter(channel: channel), selectedProtocol: selectedProtocol,
                closed: closed.futureResult
            ))
        }
    }
}

/// What an upgrade request ended with.
public enum GatewayWebSocketOutcome: Sendable {
    /// The server upgraded: the connection is open.
    case upgraded(GatewayWebSocketConnection)
    /// The server answered with another status (the connection is closed).
    case refused(GatewayWebSocketRefusal)
}
