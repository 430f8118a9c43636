import Foundation
import GatehousePostgres
import GatehouseServer
import Logging
import Synchronization

/// Gatehouse nodes on one PostgreSQL database: in-process servers on free loopback ports, each with its own
/// `PostgresStore` (its own connection pool), like stateless nodes behind a load balancer.
final class NodeCluster: Sendable {
    struct Node: Sendable {
        let server: TestServer
        let store: PostgresStore
        let app: RunningApp
    }

    let location: PostgresLocation
    let policyPath: String
    private let started = Mutex<[Node]>([])

    private init(location: PostgresLocation, policyPath: String) {
        self.location = location
        self.policyPath = policyPath
    }

    /// The nodes started so far, in order.
    var nodes: [TestServer] { started.withLock { $0.map(\.server) } }

    /// Runs `body` against `count` nodes started at the same time on a fresh database, then stops them and drops
    /// the database.
    static func run<T: Sendable>(
        nodes count: Int = 2, policy: String = TestPolicies.standard, _ body: (NodeCluster) async throws -> T
    ) async throws -> T {
        try await TestPostgres.withDatabase { location in
            let directory = TestServer.temporaryDirectory()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let policyPath = directory + "/policy.yaml"
            try policy.write(toFile: policyPath, atomically: true, encoding: .utf8)
            let cluster = NodeCluster(location: location, policyPath: policyPath)
            do {
                // Together: migrations and the first signing key race as they would in production.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<count { group.addTask { _ = try await cluster.startNode() } }
                    try await group.waitForAll()
                }
                let result = try await body(cluster)
                await cluster.stopAll()
                return result
            } catch {
                await cluster.stopAll()
                throw error
            }
        }
    }

    /// Starts one more node on the cluster's database.
    func startNode() async throws -> TestServer {
        let store = try await PostgresStore.connect(location, logger: TestPostgres.logger)
        var configuration = ServerConfiguration(store: store)
        configuration.port = 0
        configuration.policyPath = policyPath
        configuration.adapters = [ResourceAdapter()]
        var logger = Logger(label: "gatehouse-node")
        logger.logLevel = .warning
        do {
            let app = try await RunningApp.start(logger: logger) { onRunning in
                try await Gatehouse.makeApplication(configuration, logger: logger, onServerRunning: onRunning)
            }
            let node = Node(server: TestServer(port: app.port, dataDirectory: ""), store: store, app: app)
            started.withLock { $0.append(node) }
            return node.server
        } catch {
            await store.shutdown()
            throw error
        }
    }

    private func stopAll() async {
        let nodes = started.withLock { nodes in
            defer { nodes.removeAll() }
            return nodes
        }
        for node in nodes {
            await node.app.stop()
            await node.store.shutdown()
        }
    }
}
