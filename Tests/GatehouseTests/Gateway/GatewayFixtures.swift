import GatehouseEcho
import Foundation
import GatehouseClient
import GatehouseGateway
import GatehouseHTTP
import Hummingbird
import HummingbirdWSClient
import Logging
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Echo upstream + gateway on loopback for the gateway tests.
struct GatewayFixture: Sendable {
    let gateway: Gateway
    let gatewayApp: RunningApp
    let echo: RunningApp
    var base: String { "http://127.0.0.1:\(gatewayApp.port)" }
    var wsBase: String { "ws://127.0.0.1:\(gatewayApp.port)" }

    static var logger: Logger {
        var logger = Logger(label: "gateway-test")
        logger.logLevel = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_LOG"] == "debug" ? .debug : .warning
        return logger
    }

    /// Users of the tests (bcrypt cost 4 to keep them fast).
    static let joe = GatewayUser.hashing(username: "joe", password: "welcome", roles: ["AUTHORIZED"], cost: 4)
    static let ann = GatewayUser.hashing(username: "ann", password: "secret", roles: ["GUEST"], cost: 4)

    /// Starts an echo upstream and a gateway whose configuration `make` builds from the echo's base URL.
    static func run<T: Sendable>(
        customModules: [String: any LoginModule] = [:], tracer: OTLPTracer? = nil, _ make: (String) throws -> GatewayConfiguration,
        _ body: (GatewayFixture) async throws -> T
    ) async throws -> T {
        let echo = try await RunningApp.start(logger: logger) { onRunning in EchoService.makeApplication(logger: logger, onServerRunning: onRunning) }
        var configuration = try make("http://127.0.0.1:\(echo.port)")
        configuration.port = 0
        let gateway = try Gateway(configuration: configuration, customModules: customModules, tracer: tracer, logger: logger)
        let app = try await RunningApp.start(logger: logger) { onRunning in try gateway.makeServer(onServerRunning: onRunning) }
        let fixture = GatewayFixture(gateway: gateway, gatewayApp: app, echo: echo)
        do {
            let result = try await body(fixture)
            await app.stop()
            await echo.stop()
            return result
        } catch {
            await app.stop()
            await echo.stop()
            throw error
        }
    }

    /// A realm of users joe (AUTHORIZED) and ann (GUEST).
    static func usersRealm(_ name: String, scheme: ChallengeScheme, description: String? = nil, authorizationTimeout: Double? = nil) -> RealmConfiguration {
        RealmConfiguration(name: name, description: description, scheme: scheme, queryParameters: ["credentials"],
                           authorizationTimeout: authorizationTimeout,
                           loginModules: [LoginModuleConfiguration(type: "users", flag: .required, users: [joe, ann])])
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await HTTP.send(.GET, base + path, headers: headers)
    }
}

/// A login handler that answers from a list and counts the questions.
final class CountingLoginHandler: LoginHandler {
    private let answers: [PasswordCredentials]
    private let count = Mutex(0)
    init(_ answers: PasswordCredentials...) { self.answers = answers }
    init(repeating answer: PasswordCredentials) { self.answers = Array(repeating: answer, count: 100) }
    var asked: Int { count.withLock { $0 } }
    func credentials(for request: ChallengeRequest) async -> PasswordCredentials? {
        let index = count.withLock { value -> Int in
            defer { value += 1 }
            return value
        }
        return index < answers.count ? answers[index] : nil
    }
}

extension PasswordCredentials {
    static let joe = PasswordCredentials(username: "joe", password: "welcome")
    static let ann = PasswordCredentials(username: "ann", password: "secret")
    static let wrong = PasswordCredentials(username: "joe", password: "nope")
}

func basicAuthorization(_ user: String, _ password: String) -> String {
    "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
}

extension GatewayHTTPClient {
    /// The status of the final answer.
    func status(_ request: URLRequest) async throws -> Int {
        let (_, response) = try await send(request)
        return response.statusCode
    }
}
