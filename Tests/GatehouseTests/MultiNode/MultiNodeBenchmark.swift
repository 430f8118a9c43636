import Foundation
import GatehousePostgres
import Synchronization
import Testing

/// Complete flows per second with one SQLite node, one PostgreSQL node and two PostgreSQL nodes, in one run.
/// Runs only through `scripts/bench-multinode` (which sets `GATEHOUSE_BENCH_SECONDS`, builds the release
/// `gatehouse` it names in `GATEHOUSE_BENCH_BINARY` and starts a durable throwaway PostgreSQL).
///
/// The nodes are real `gatehouse serve` processes; this process is the load: `GATEHOUSE_BENCH_WORKERS` workers each
/// run flows (register → preauthorize 401 → answer 200 → authorization 302 → token 200), sending each request to
/// the next node in turn, as a round-robin load balancer would.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["GATEHOUSE_BENCH_SECONDS"] != nil))
struct MultiNodeBenchmark {
    enum Setup: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqliteOneNode = "SQLite, 1 node"
        case postgresOneNode = "PostgreSQL, 1 node"
        case postgresTwoNodes = "PostgreSQL, 2 nodes"
        var testDescription: String { rawValue }
    }

    final class Tally: Sendable {
        private struct Counts {
            var flows = 0
            var failures = 0
            var conflicts = 0
            var latencies: [Double] = []
            var firstFailure: String?
        }

        private let counts = Mutex(Counts())
        let stop = Atomic<Bool>(false)
        let measuring = Atomic<Bool>(false)

        func flow(_ seconds: Double) {
            guard measuring.load(ordering: .relaxed) else { return }
            counts.withLock {
                $0.flows += 1
                $0.latencies.append(seconds)
            }
        }

        func failure(_ text: String, conflict: Bool) {
            guard measuring.load(ordering: .relaxed) else { return }
            counts.withLock {
                $0.failures += 1
                if conflict { $0.conflicts += 1 }
                if $0.firstFailure == nil { $0.firstFailure = text }
            }
        }

        var summary: (flows: Int, failures: Int, conflicts: Int, p50: Double, p99: Double, firstFailure: String?) {
            counts.withLock { counts in
                let sorted = counts.latencies.sorted()
                func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
                return (counts.flows, counts.failures, counts.conflicts, percentile(0.5), percentile(0.99), counts.firstFailure)
            }
        }
    }

    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// One worker's flows, each request to the next node.
    static func work(templates: [ProtocolClient], tally: Tally, offset: Int) async {
        var turn = offset
        func next(_ client: inout ProtocolClient) {
            client.move(to: templates[turn % templates.count].server)
            turn += 1
        }
        while !tally.stop.load(ordering: .relaxed) {
            var client = templates[0]
            let started = ContinuousClock.now
            do {
                next(&client)
                try await client.register()
                next(&client)
                let challenge = try await client.preauthorize(scope: "accessRestricted")
                guard challenge.status == 401 else { throw TestFailure("challenge: \(challenge.status)") }
                next(&client)
                let answer = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
                guard answer.status == 200 else { throw TestFailure("answer: \(answer.status)") }
                next(&client)
                let authorization = try await client.authorize(scope: "accessRestricted")
                guard authorization.status == 302, let code = ProtocolClient.code(from: authorization) else {
                    throw TestFailure("authorization: \(authorization.status)")
                }
                next(&client)
                let token = try await client.token(code: code)
                guard token.status == 200 else { throw TestFailure("token: \(token.status)") }
                let elapsed = ContinuousClock.now - started
                tally.flow(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            } catch {
                tally.failure(String(describing: error), conflict: String(describing: error).contains("409"))
            }
        }
    }

    @Test(arguments: Setup.allCases)
    func flowsPerSecond(setup: Setup) async throws {
        let seconds = Double(Self.environment["GATEHOUSE_BENCH_SECONDS"] ?? "") ?? 10
        let workers = Int(Self.environment["GATEHOUSE_BENCH_WORKERS"] ?? "") ?? 16
        let binary = URL(fileURLWithPath: Self.environment["GATEHOUSE_BENCH_BINARY"] ?? GatehouseProcess.executable.path)
        let logs = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: logs) }

        func measure(_ arguments: [String], nodes count: Int) async throws {
            var nodes: [ServeProcess] = []
            for _ in 0..<count { nodes.append(try await ServeProcess.start(arguments, logDirectory: logs, executable: binary)) }
            let key = try ProtocolClient(nodes[0].server)
            let templates = nodes.map { node in
                var client = key
                client.move(to: node.server)
                return client
            }
            let tally = Tally()
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for worker in 0..<workers { group.addTask { await Self.work(templates: templates, tally: tally, offset: worker) } }
                }
            }
            try await Task.sleep(for: .seconds(2))  // warm-up: connections, pools, caches
            tally.measuring.store(true, ordering: .relaxed)
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(seconds))
            tally.measuring.store(false, ordering: .relaxed)
            let elapsed = ContinuousClock.now - start
            tally.stop.store(true, ordering: .relaxed)
            await load.value
            for node in nodes { try await node.stop() }
            let s = tally.summary
            let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let line = String(
                format: "BENCH %@ %8.1f flows/s  p50 %6.1f ms  p99 %6.1f ms  (%d flows, %d failed, %d conflicts, %d workers, %.0f s)",
                setup.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0) as NSString, Double(s.flows) / wall, s.p50 * 1000, s.p99 * 1000, s.flows, s.failures, s.conflicts, workers, wall)
            print(line)
            if let first = s.firstFailure { print("BENCH   first failure: \(first)") }
            #expect(s.failures == 0 || s.failures == s.conflicts)
        }

        switch setup {
        case .sqliteOneNode:
            let directory = TestServer.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await measure(["--data", directory], nodes: 1)
        case .postgresOneNode, .postgresTwoNodes:
            try await TestPostgres.withDatabase { location in
                try await measure(["--database", TestPostgres.url(of: location)], nodes: setup == .postgresOneNode ? 1 : 2)
            }
        }
    }
}
