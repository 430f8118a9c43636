import GatehouseEcho
import ArgumentParser
import Foundation
import GatehouseGateway
import GatehouseHTTP
import GatehouseServer
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `gatehouse gateway`: HTTP and WebSocket services behind challenge schemes, realms and login modules.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Run the gateway: upstream HTTP and WebSocket services behind realms (challenge schemes and login modules).",
        discussion: """
            Without --config, runs the demo: a WebSocket and HTTP echo service at /echo behind the realm "Demo Realm" \
            (Application Basic; joe/welcome has the role AUTHORIZED, ann/secret does not). Try it with `gatehouse echo`.
            Every option can also come from the environment: GATEHOUSE_<OPTION>, e.g. GATEHOUSE_CONFIG=gateway.yaml; the \
            command line wins.
            """
    )

    @Option(help: "The gateway's YAML configuration (realms, login modules, services).")
    var config: String?

    @Option(help: "The address to listen on (overrides the configuration's host).")
    var host: String?

    @Option(help: "The port to listen on, 0 for a free one (overrides the configuration's port).")
    var port: Int?

    @OptionGroup var tls: TLSOptions

    @OptionGroup var tracing: TracingOptions

    @OptionGroup var loops: EventLoopOptions

    @Option(help: ArgumentHelp("CA certificates (PEM) to verify https/wss upstreams with, instead of the system's.", valueName: "file"))
    var upstreamCAFile: String?

    @Option(help: "How much to log.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        loops.apply()
        var logger = Logger(label: "gatehouse-gateway")
        logger.logLevel = logLevel
        OpenFileLimit.check(logger: logger)
        if let config {
            var configuration: GatewayConfiguration
            do {
                configuration = try GatewayConfiguration.load(path: config)
            } catch {
                throw CommandFailure(config, error)
            }
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            try await serve(configuration, demo: false, logger: logger)
            return
        }
        // The demo: an echo upstream on a free loopback port, then the gateway in front of it.
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let echo = EchoService.makeApplication(logger: logger) { port in continuation.yield(port) }
        let echoGroup = ServiceGroup(configuration: .init(services: [echo], gracefulShutdownSignals: [], logger: logger))
        let echoTask = Task { try await echoGroup.run() }
        var iterator = ports.makeAsyncIterator()
        guard let echoPort = await iterator.next() else { throw CommandFailure("the demo's echo service did not start") }
        var configuration = Self.demoConfiguration(upstream: "http://127.0.0.1:\(echoPort)")
        configuration.host = host ?? configuration.host
        configuration.port = port ?? configuration.port
        do {
            try await serve(configuration, demo: true, logger: logger)
        } catch {
            await echoGroup.triggerGracefulShutdown()
            _ = await echoTask.result
            throw error
        }
        await echoGroup.triggerGracefulShutdown()
        _ = await echoTask.result
    }

    private func serve(_ configuration: GatewayConfiguration, demo: Bool, logger: Logger) async throws {
        var configuration = configuration
        if let files = tls.files { configuration.tls = .init(certificate: files.certificate, key: files.key, clientCertificates: tls.tlsClientCertificates) }
        if let upstreamCAFile { configuration.upstreamCAFile = upstreamCAFile }
        let host = configuration.host
        let services = configuration.services
        let secure = configuration.tls != nil
        let gateway: Gateway
        let server: GatewayServer
        do {
            (gateway, server) = try Gateway.makeServer(
                configuration, tracer: try tracing.tracer(serviceName: "gatehouse-gateway", version: Gatehouse.version, logger: logger), logger: logger
            ) { port in
                Self.printBanner(host: host, port: port, services: services, demo: demo, tls: secure)
            }
        } catch let error as GatewayConfigurationError {
            throw CommandFailure(config ?? "gateway", error)
        } catch let error as ReloadableTLS.LoadError {
            throw CommandFailure("TLS", error)
        }
        if !secure, !ServingWarnings.isLoopback(host) {
            logger.warning("Serving plain HTTP on \(host): passwords and tokens cross the network in clear. Use --tls-certificate/--tls-key, or a TLS-terminating proxy on this machine.")
        }
        let reloading = gateway.tls?.reloadOnHangup(logger: logger)
        defer { reloading?.cancel() }
        // The drain after the server: the server shuts down first, it closes WebSockets with 1001 before the server stops.
        do {
            try await ServiceGroup(configuration: .init(
                services: [server, gateway.webSocketDrain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
        } catch let error as IOError {
            throw CommandFailure("Cannot serve on \(host):\(configuration.port)", error)
        }
    }

    /// The demo's realm and service (the seed's echo behind a login).
    static func demoConfiguration(upstream: String) -> GatewayConfiguration {
        let users = [
            GatewayUser.hashing(username: "joe", password: "welcome", roles: ["AUTHORIZED"]),
            GatewayUser.hashing(username: "ann", password: "secret", roles: ["GUEST"]),
        ]
        return GatewayConfiguration(
            host: "127.0.0.1", port: 8090,
            realms: [RealmConfiguration(name: "demo", description: "Demo Realm", scheme: .applicationBasic,
                                        loginModules: [LoginModuleConfiguration(type: "users", flag: .required, users: users)])],
            services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo",
                                            requireRoles: ["AUTHORIZED"], webSocket: true)])
    }

    static func printBanner(host: String, port: Int, services: [ServiceConfiguration], demo: Bool, tls: Bool = false) {
        var text = "Gatehouse gateway listens on \(tls ? "https" : "http")://\(host):\(port)\n"
        for service in services {
            text += "  \(service.path) -> \(service.upstream)" + (service.realm.map { " (realm \($0))" } ?? " (open)")
                + (service.webSocket == true ? ", WebSocket" : "") + "\n"
        }
        if demo {
            text += """
                Demo: joe/welcome may use /echo, ann/secret may not. Try it:
                  gatehouse echo --url ws://\(host):\(port)/echo
                  curl -i -u joe:welcome http://\(host):\(port)/echo/hello
                Stop with Ctrl-C.

                """
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
