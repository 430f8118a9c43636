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

/// The gateway's Hummingbird application: its server, lifecycle and connections (``GatewayChannel``).
extension Gateway {

    /// The gateway's Hummingbird application (port 0 picks a free one; `onServerRunning` gets the port): Hummingbird's
    /// server accepts the connections and runs the lifecycle (graceful shutdown included); each connection is a
    /// ``GatewayChannel``, served by one ``GatewayHTTPHandler`` on its event loop. The application's router is empty:
    /// the gateway's connections never hand a request to it.
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration(http2: false, clientCertificates: clientCertificates)) }
        let server = HTTPServerBuilder { _ in GatewayChannel(gateway: self, sslContext: sslContext) }
        return Application(
            router: Router(),
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
