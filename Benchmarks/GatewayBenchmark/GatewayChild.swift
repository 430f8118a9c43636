import BenchmarkSupport
import Foundation
import GatehouseGateway
import Hummingbird
import Logging

/// The gateway under measurement, run as a process of its own (this executable with `--serve-gateway`) so that
/// its memory is measured apart from the load: a `Basic` realm with one user in front of the echo upstream at
/// `/echo`, and a token realm (`gatehouse-token` with the load's key set) in front of it at `/token-echo`.
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
        let (_, application) = try Gateway.makeApplication(configuration, logger: logger) { port in
            try? "\(port)".write(toFile: portFile, atomically: true, encoding: .utf8)
        }
        // Ends with its parent, even one killed without a chance to stop it.
        Task.detached {
            while getppid() != 1 { try? await Task.sleep(for: .seconds(1)) }
            exit(0)
        }
        try await application.runService()
    }

    /// Starts the child for `upstream` (tokens verified against `jwksURL`) and returns it with its port (30 s at most).
    static func start(upstream: String, jwksURL: String) throws -> (Process, Int) {
        let portFile = NSTemporaryDirectory() + "gatehouse-bench-gateway-\(UUID().uuidString).port"
        defer { try? FileManager.default.removeItem(atPath: portFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--serve-gateway", upstream, portFile, jwksURL]
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) { return (process, port) }
            usleep(100_000)
        }
        process.terminate()
        throw Wrk.Failure(description: "the gateway process did not start within 30 s")
    }
}
