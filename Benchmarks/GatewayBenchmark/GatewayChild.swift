import BenchmarkSupport
import Foundation
import GatehouseGateway
import Hummingbird
import Logging
import NIOPosix

/// The gateway under measurement, run as a process of its own (this executable with `--serve-gateway`) so that
/// its memory is measured apart from the load: a `Basic` realm with one user in front of the echo upstream at
/// `/echo`, and a token realm (`gatehouse-token` with the load's key set) in front of it at `/token-echo`. The same
/// process, on the same event loops, runs a ``ByteRelay`` and an ``HTTPPartsRelay`` to the upstream, NIO's floors for
/// any proxy and for a proxy on NIO's HTTP codec, and a ``HeadRewritingRelay``, a sketch of a relay without the codec.
enum GatewayChild {
    static let user = "bench"
    static let password = "bench-password"
    static var authorization: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    static func run(upstream: String, portFile: String, jwksURL: String) async throws {
        let configuration = GatewayConfiguration(
            host: "127.0.0.1", port: 0,
            realms: [
                RealmConfiguration(name: "bench", description: "Bench", scheme: .basic, loginModules: [
                    LoginModuleConfiguration(type: "users", flag: .required,
                                             users: [GatewayUser.hashing(username: user, password: password, roles: ["AUTHORIZED"])]),
                ]),
                RealmConfiguration(name: "tokens", description: "Bench", scheme: .bearer, loginModules: [
                    LoginModuleConfiguration(type: "gatehouse-token", flag: .required, jwksURL: jwksURL),
                ]),
            ],
            services: [
                ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "bench",
                                     requireRoles: ["AUTHORIZED"], webSocket: true),
                ServiceConfiguration(name: "token-echo", path: "/token-echo", upstream: upstream + "/echo", realm: "tokens",
                                     requireRoles: ["AUTHORIZED"]),
            ])
        var logger = Logger(label: "bench-gateway")
        logger.logLevel = .error
        guard let url = URL(string: upstream), let host = url.host, let upstreamPort = url.port else {
            throw Wrk.Failure(description: "not an upstream URL: \(upstream)")
        }
        let relay = try await ByteRelay.start(upstreamHost: host, upstreamPort: upstreamPort, group: MultiThreadedEventLoopGroup.singleton)
        let relayPort = relay.localAddress?.port ?? 0
        let partsRelay = try await HTTPPartsRelay.start(upstreamHost: host, upstreamPort: upstreamPort, group: MultiThreadedEventLoopGroup.singleton)
        let partsRelayPort = partsRelay.localAddress?.port ?? 0
        let sketch = try await HeadRewritingRelay.start(upstreamHost: host, upstreamPort: upstreamPort, authorization: authorization,
                                                        group: MultiThreadedEventLoopGroup.singleton)
        let sketchPort = sketch.localAddress?.port ?? 0
        let (_, server) = try Gateway.makeServer(configuration, logger: logger) { port in
            try? "\(port) \(relayPort) \(partsRelayPort) \(sketchPort)".write(toFile: portFile, atomically: true, encoding: .utf8)
        }
        // Ends with its parent, even one killed without a chance to stop it.
        Task.detached {
            while getppid() != 1 { try? await Task.sleep(for: .seconds(1)) }
            exit(0)
        }
        try await server.run()
    }

    /// Starts the child for `upstream` (tokens verified against `jwksURL`) and returns it with the gateway's port, the
    /// byte relay's, the HTTP parts relay's and the head-rewriting sketch's (30 s at most).
    static func start(upstream: String, jwksURL: String) throws -> (Process, gateway: Int, relay: Int, partsRelay: Int, sketch: Int) {
        let portFile = NSTemporaryDirectory() + "gatehouse-bench-gateway-\(UUID().uuidString).port"
        defer { try? FileManager.default.removeItem(atPath: portFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--serve-gateway", upstream, portFile, jwksURL]
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8) {
                let ports = text.split(separator: " ").compactMap { Int($0) }
                if ports.count == 4 { return (process, ports[0], ports[1], ports[2], ports[3]) }
            }
            usleep(100_000)
        }
        process.terminate()
        throw Wrk.Failure(description: "the gateway process did not start within 30 s")
    }
}
