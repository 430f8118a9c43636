import GatehouseHTTP
public import Logging
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
public import ServiceLifecycle

/// The gateway's listener, a service: it accepts connections on NIO's event loops and sets each up as a
/// `GatewayChannel` right there — no task and no hop to Swift concurrency per connection (Hummingbird's server hands
/// every accepted connection to a task of its own; the gateway's connections need none: measured, that hop was a
/// sixth of the CPU a new connection cost, `scripts/bench-gateway-connections`). On graceful shutdown it stops
/// accepting, tells every connection to close when idle (`ChannelShouldQuiesceEvent`: after the answer in progress)
/// and returns once they all have.
///
/// ```swift
/// let (gateway, server) = try Gateway.makeServer(try GatewayConfiguration.load(path: "gateway.yaml"))
/// try await ServiceGroup(configuration: .init(services: [server, gateway.webSocketDrain], logger: logger)).run()
/// ```
public struct GatewayServer: Service {
    let gateway: Gateway
    let channel: GatewayChannel
    let onServerRunning: @Sendable (Int) async -> Void
    /// What runs beside the listener for as long as it runs: the OTLP exporter when the gateway traces.
    public let services: [any Service]

    public func run() async throws {
        let statistics = gateway.statistics
        let setup = channel
        let listener = FrontListener(host: gateway.host, port: gateway.port, name: "gateway", logger: gateway.logger,
                                     initialize: { setup.initialize($0) }, refused: { statistics.acceptRefused() },
                                     paused: { statistics.acceptPaused() }, onServerRunning: onServerRunning)
        if services.isEmpty {
            try await listener.run()
            return
        }
        try await ServiceGroup(configuration: .init(services: [listener] + services, gracefulShutdownSignals: [], logger: gateway.logger)).run()
    }
}

extension Gateway {
    /// The gateway's server (port 0 picks a free one; `onServerRunning` gets the port once it listens).
    public func makeServer(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> GatewayServer {
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration(http2: false, clientCertificates: clientCertificates)) }
        return GatewayServer(gateway: self, channel: GatewayChannel(gateway: self, sslContext: sslContext), onServerRunning: onServerRunning,
                             services: tracer.map { [$0.exporter] } ?? [])
    }

    /// A gateway from `configuration` and its server.
    public static func makeServer(
        _ configuration: GatewayConfiguration, customModules: [String: any LoginModule] = [:], tracer: OTLPTracer? = nil,
        logger: Logger = Logger(label: "gatehouse-gateway"), onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> (gateway: Gateway, server: GatewayServer) {
        let gateway = try Gateway(configuration: configuration, customModules: customModules, tracer: tracer, logger: logger)
        return (gateway, try gateway.makeServer(onServerRunning: onServerRunning))
    }
}
