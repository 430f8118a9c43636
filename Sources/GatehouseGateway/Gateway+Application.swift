import NIOSSL
import GatehouseHTTP
import GatehouseChecks
import Foundation
import GatehouseResourceServer
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// The gateway's Hummingbird application: its connections (TLS, first-request guards, WebSocket upgrades).
extension Gateway {

    /// The gateway's Hummingbird application (port 0 picks a free one; `onServerRunning` gets the port).
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let webSocketRouter = Router(context: GatewayRequestContext.self)
        let upgrade: @Sendable (Request, GatewayRequestContext) async throws -> RouterShouldUpgrade = { [self] request, context in
            await shouldUpgrade(request, context: context)
        }
        let relay: WebSocketDataHandler<WebSocketRouterContext<GatewayRequestContext>> = { [self] inbound, outbound, context in
            guard let relay = acceptedUpgrades.withLock({ $0.removeValue(forKey: context.requestContext.connection) }) else {
                try await outbound.close(.unexpectedServerError, reason: "no accepted upgrade")
                return
            }
            statistics.webSocketOpened(service: relay.serviceName)
            let key = openWebSockets.add(outbound)
            await relay.run(client: inbound, outbound)
            openWebSockets.remove(key)
            statistics.webSocketClosed()
        }
        let refusedUpgrades = self.refusedUpgrades
        webSocketRouter.ws("/", shouldUpgrade: upgrade, onUpgrade: relay)
        webSocketRouter.ws("**", shouldUpgrade: upgrade, onUpgrade: relay)
        let webSocketResponder = webSocketRouter.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [refusedUpgrades.makeHandler(), UpgradeRedirectHandler()],
                         idleTimeout: TimeAmount(idleTimeout), httpDecoderConfiguration: RequestHeadLimits.decoder),
            ws: .init(maxFrameSize: maxMessageSize))
        let headTimeout = TimeAmount(headerReadTimeout)
        // The upgrade channel with the gateway's guards for the first request (Hummingbird's idle timeout and its
        // parse-error answer only start once the first head has been handed to it).
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration(http2: false, clientCertificates: clientCertificates)) }
        let server = HTTPServerBuilder { responder in
            GatewayChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                headerReadTimeout: headTimeout, sslContext: sslContext, clientCertificates: self.clientCertificates, statistics: self.statistics,
                gateway: self)
        }
        return Application(
            responder: GatewayResponder(gateway: self),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "Gatehouse-Gateway"),
            services: tracer.map { [$0.exporter] } ?? [],
            onServerRunning: { [statistics, logger] channel in
                await AcceptPressureHandler.install(on: channel, logger: logger) { statistics.acceptRefused() }
                await onServerRunning(channel.localAddress?.port ?? 0)
            },
            logger: logger)
    }

    /// A gateway from `configuration` and its application.
    public static func makeApplication(
        _ configuration: GatewayConfiguration, customModules: [String: any LoginModule] = [:], tracer: OTLPTracer? = nil,
        logger: Logger = Logger(label: "gatehouse-gateway"), onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> (gateway: Gateway, application: some ApplicationProtocol) {
        let gateway = try Gateway(configuration: configuration, customModules: customModules, tracer: tracer, logger: logger)
        return (gateway, try gateway.makeApplication(onServerRunning: onServerRunning))
    }
}

/// Sends every request through ``Gateway/respond(to:context:)``.
struct GatewayResponder: HTTPResponder {
    let gateway: Gateway
    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        let start = ContinuousClock.now
        var service = "none"
        let response = try await gateway.respond(to: request, context: context, service: &service)
        gateway.statistics.request(service: service, status: Int(response.status.code), duration: ContinuousClock.now - start)
        return response
    }
}
