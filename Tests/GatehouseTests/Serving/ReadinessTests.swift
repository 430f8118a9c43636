import Foundation
import GatehousePostgres
import GatehouseServer
import Logging
import Testing

/// `/ready` follows the store: false (503) while PostgreSQL is unreachable, true again once it is back;
/// `/health` stays 200 throughout.
@Suite(.timeLimit(.minutes(3))) struct ReadinessTests {
    @Test func readyFollowsPostgreSQL() async throws {
        try await TestPostgres.withDatabase { location in
            let proxy = try TCPProxy(targetPort: location.port)
            defer { proxy.stop() }
            var throughProxy = location
            throughProxy.host = "127.0.0.1"
            throughProxy.port = proxy.port
            throughProxy.connectTimeout = .seconds(10)
            let store: PostgresStore
            do {
                store = try await PostgresStore.connect(throughProxy, logger: TestPostgres.logger)
            } catch {
                throw TestFailure("connecting through the proxy failed: \(String(reflecting: error))")
            }
            var configuration = ServerConfiguration(store: store)
            configuration.port = 0
            var logger = Logger(label: "readiness-test")
            logger.logLevel = .critical
            let app = try await RunningApp.start(logger: logger) { onRunning in
                try await Gatehouse.makeApplication(configuration, logger: logger, onServerRunning: onRunning)
            }
            let base = "http://127.0.0.1:\(app.port)"
            func ready() async throws -> TestResponse { try await HTTP.send(.GET, base + "/ready") }
            do {
                #expect(try await ready().status == 200)
                proxy.cut()
                var down: TestResponse?
                for _ in 0..<20 {
                    let answer = try await ready()
                    if answer.status == 503 { down = answer; break }
                    try await Task.sleep(for: .milliseconds(250))
                }
                #expect(down?.status == 503)
                #expect(down?.json?["checks"]?["store"] == "unreachable")
                #expect(try await HTTP.send(.GET, base + "/health").status == 200)
                proxy.restore()
                var back = false
                for _ in 0..<60 where !back {
                    back = try await ready().status == 200
                    if !back { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(back, "ready again once PostgreSQL is reachable")
            }
            await app.stop()
            await store.shutdown()
        }
    }

    /// (Here, in the serial pass: the store probe has 4 s, which a full parallel pass on two cores once outlasted.)
    @Test func readinessNamesItsChecks() async throws {
        try await TestServer.run { server in
            let ready = try await HTTP.send(.GET, server.baseURL + "/ready")
            #expect(ready.status == 200)
            #expect(ready.json?["status"] == "ready")
            #expect(ready.json?["checks"]?["store"] == "ok")
            #expect(ready.json?["checks"]?["signingKeys"] == "ok")
        }
    }
}
