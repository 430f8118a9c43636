import Foundation
import GatehouseChecks
import GatehouseHTTP
import GatehouseServer
import GatehouseSQLite
import Hummingbird
import Logging

/// A real Gatehouse server on a free loopback port, with its own data folder.
struct TestServer: Sendable {
    let port: Int
    let dataDirectory: String
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Runs `body` against a server started with `policy` (YAML), then stops the server.
    static func run<T: Sendable>(
        policy: String = TestPolicies.standard, dataDirectory: String? = nil,
        registry: SecurityCheckRegistry = .builtIn, issuer: String? = nil, headerReadTimeout: Duration? = nil,
        auditLines: Logger? = nil, introspectedClientLifetime: Duration? = nil, trustedProxies: [String] = [],
        metricsAccess: ServerConfiguration.MetricsAccess? = nil, tracer: OTLPTracer? = nil, signInTheme: SignInTheme? = nil,
        _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let directory = dataDirectory ?? Self.temporaryDirectory()
        let policyPath = (directory as NSString).appendingPathComponent("policy.yaml")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try policy.write(toFile: policyPath, atomically: true, encoding: .utf8)
        var configuration = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: directory))
        configuration.port = 0
        configuration.policyPath = policyPath
        configuration.adapters = [ResourceAdapter()]
        configuration.registry = registry
        configuration.issuer = issuer
        configuration.auditLines = auditLines
        if let headerReadTimeout { configuration.headerReadTimeout = headerReadTimeout }
        configuration.trustedProxies = try TrustedProxies(trustedProxies)
        configuration.metricsAccess = metricsAccess
        configuration.tracer = tracer
        if let signInTheme { configuration.signInTheme = signInTheme }
        if let introspectedClientLifetime { configuration.introspectedClientLifetime = introspectedClientLifetime }
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .warning
        let running = try await RunningApp.start(logger: logger) { onRunning in
            try await Gatehouse.makeApplication(configuration, logger: logger, onServerRunning: onRunning)
        }
        let server = TestServer(port: running.port, dataDirectory: directory)
        do {
            let result = try await body(server)
            await running.stop()
            return result
        } catch {
            await running.stop()
            throw error
        }
    }

    static func temporaryDirectory() -> String {
        (NSTemporaryDirectory() as NSString).appendingPathComponent("gatehouse-test-\(UUID().uuidString)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
