import Foundation
import GatehousePostgres
import GatehouseStore
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33's drills on PostgreSQL, against real `gatehouse serve` processes sharing a cluster of the drill's own:
/// restarts (`fast` and `immediate`) under a steady load of flows, a frozen database, a database that comes up after
/// the node. Every request must be answered — in time, and only ever as the protocol answers or `503` — no node may
/// die, and no registration answered `201` may be lost. Each drill prints its figures.
@Suite(.serialized, .timeLimit(.minutes(6))) struct PostgresFaultTests {
    /// What the load saw: every request's status (or transport failure) and duration, and the registrations answered.
    final class Ledger: Sendable {
        struct Entry: Sendable {
            var status: Int?
            var error: String?
            var seconds: Double
        }

        private let entries = Mutex<[Entry]>([])
        private let registered = Mutex<[(node: Int, clientID: String)]>([])
        let stop = Atomic<Bool>(false)

        func record(_ entry: Entry) { entries.withLock { $0.append(entry) } }
        func registered(_ clientID: String, node: Int) { registered.withLock { $0.append((node, clientID)) } }
        var all: [Entry] { entries.withLock { $0 } }
        var clients: [String] { registered.withLock { $0.map(\.clientID) } }
        /// The node that answered `clientID`'s registration.
        func node(of clientID: String) -> Int? { registered.withLock { $0.first { $0.clientID == clientID }?.node } }

        /// Requests by status (`error` for transport failures).
        var byStatus: [String: Int] {
            all.reduce(into: [:]) { counts, entry in counts[entry.status.map(String.init) ?? "error", default: 0] += 1 }
        }

        /// When the last registration was answered 201.
        let lastSuccess = Mutex<ContinuousClock.Instant?>(nil)
    }

    /// The statuses a flow's requests may be answered with: the protocol's, or 503 while the store is out.
    static let expected: Set<Int> = [200, 201, 401, 503]

    /// One worker: register → preauthorize (challenge) → answer the PIN, on the nodes in turn, until told to stop.
    static func work(_ nodes: [ServeProcess], worker: Int, ledger: Ledger) async {
        var turn = worker
        while !ledger.stop.load(ordering: .acquiring) {
            turn += 1
            let node = turn % nodes.count
            guard var client = try? ProtocolClient(nodes[node].server) else { return }
            func timed(_ request: () async throws -> TestResponse) async -> TestResponse? {
                let start = ContinuousClock.now
                do {
                    let response = try await request()
                    ledger.record(.init(status: response.status, seconds: (ContinuousClock.now - start).seconds))
                    return response
                } catch {
                    ledger.record(.init(error: "\(error)", seconds: (ContinuousClock.now - start).seconds))
                    return nil
                }
            }
            guard let registration = await timed({ try await client.registerRequest() }) else { continue }
            guard registration.status == 201, let location = registration.header("Location") else {
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            let clientID = String(location.split(separator: "/").last!)
            ledger.registered(clientID, node: node)
            ledger.lastSuccess.withLock { $0 = .now }
            client.adopt(clientID: clientID)
            guard let challenge = await timed({ try await client.preauthorize(scope: "accessRestricted") }), challenge.status == 401 else { continue }
            _ = await timed({ try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]) })
        }
    }

    /// Two nodes on a fresh cluster, a load of `workers` workers, `body` (the fault) while it runs; then the checks
    /// every drill shares.
    static func drill(
        _ name: String, workers: Int = 6, nodeArguments: [String] = [],
        _ body: (ThrowawayCluster, [ServeProcess], Ledger) async throws -> Void
    ) async throws {
        let cluster = try ThrowawayCluster()
        try cluster.start()
        let logs = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let arguments = ["--database", cluster.url, "--store-timeout", "2"] + nodeArguments
        let nodes = [try await ServeProcess.start(arguments, logDirectory: logs), try await ServeProcess.start(arguments, logDirectory: logs)]
        let ledger = Ledger()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers { group.addTask { await Self.work(nodes, worker: worker, ledger: ledger) } }
            }
        }
        do {
            try await body(cluster, nodes, ledger)
        } catch {
            ledger.stop.store(true, ordering: .releasing)
            await load.value
            for node in nodes where node.process.isRunning { try? await node.stop() }
            throw error
        }
        ledger.stop.store(true, ordering: .releasing)
        await load.value

        // No node died; every request was answered, in time, as the protocol answers or 503.
        for (index, node) in nodes.enumerated() {
            #expect(node.process.isRunning, "node \(index) died: \(node.output.suffix(3000))")
        }
        let entries = ledger.all
        let failures = entries.filter { $0.error != nil }
        let unexpected = entries.filter { $0.status.map { !Self.expected.contains($0) } ?? false }
        let slowest = entries.map(\.seconds).max() ?? 0
        #expect(failures.isEmpty, "requests not answered: \(failures.prefix(5).map { $0.error ?? "" })")
        #expect(unexpected.isEmpty, "unexpected statuses: \(unexpected.prefix(10).map { $0.status ?? 0 })")
        // A request makes a few store calls, each within --store-timeout (2 s).
        #expect(slowest < 10, "the slowest request took \(slowest) s")

        let alive = nodes.filter(\.process.isRunning).count
        // Stopped gracefully: what their audit logs hold is written.
        for node in nodes where node.process.isRunning { try await node.stop() }

        // Nothing answered 201 is lost: every registration is in the database, with its audit event.
        let store = try await PostgresStore.connect(url: cluster.url, logger: TestPostgres.logger)
        var lost: [String] = []
        for clientID in ledger.clients where try await store.registration(clientID: clientID) == nil { lost.append(clientID) }
        let audited = Set(try await store.auditEvents(after: 0, limit: 1_000_000).filter { $0.event == "registration" }.compactMap(\.clientID))
        let unaudited = ledger.clients.filter { !audited.contains($0) }
        await store.shutdown()
        #expect(lost.isEmpty, "registrations answered 201 and lost: \(lost)")
        // The nodes' own words on their audit logs (dropped batches, waits), for a failure to be read afterwards.
        let auditLines = nodes.map { node in
            "exit \(node.process.terminationStatus): " + node.output.split(separator: "\n").filter { $0.localizedCaseInsensitiveContains("audit") }.suffix(10).joined(separator: " | ")
                + " … " + node.output.split(separator: "\n").suffix(8).joined(separator: " | ")
        }
        #expect(unaudited.isEmpty, "registrations answered 201 without their audit event: \(unaudited.map { "\($0) (node \(ledger.node(of: $0) ?? -1))" }) — the nodes said: \(auditLines.suffix(20))")
        let statuses = ledger.byStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        print("drill \(name): \(entries.count) requests (\(statuses)), \(ledger.clients.count) registrations (lost \(lost.count), "
              + "without their audit event \(unaudited.count)), slowest request \(String(format: "%.2f", slowest)) s, nodes alive \(alive)/2")
    }

    /// Waits until a registration is answered after `since`; the time it took.
    static func recovery(_ ledger: Ledger, since: ContinuousClock.Instant, within limit: Duration = .seconds(30)) async throws -> Duration {
        while ContinuousClock.now - since < limit {
            if let last = ledger.lastSuccess.withLock({ $0 }), last > since { return last - since }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no registration succeeded within \(limit) of the database's return")
    }

    @Test func restartsUnderLoadKillNoNodeStrandNoRequestAndLoseNothing() async throws {
        try await Self.drill("10 restarts") { cluster, _, ledger in
            try await Task.sleep(for: .seconds(1))
            var recoveries: [Duration] = []
            for restart in 0..<10 {
                try cluster.stop(restart.isMultiple(of: 2) ? "fast" : "immediate")
                try await Task.sleep(for: .milliseconds(300))
                try cluster.start()
                recoveries.append(try await Self.recovery(ledger, since: .now))
                try await Task.sleep(for: .milliseconds(500))
            }
            let text = recoveries.map { String(format: "%.2f", $0.seconds) }.joined(separator: " ")
            print("drill 10 restarts: recovery after each restart (s): \(text)")
        }
    }

    @Test func aFrozenDatabaseIsAnswered503WithinTheDeadline() async throws {
        try await Self.drill("frozen 6 s") { cluster, _, ledger in
            try await Task.sleep(for: .seconds(1))
            let before = ledger.all.count
            try cluster.signalAll(SIGSTOP)
            try await Task.sleep(for: .seconds(6))
            try cluster.signalAll(SIGCONT)
            let thawed = ContinuousClock.now
            let recovered = try await Self.recovery(ledger, since: thawed)
            let during = ledger.all.dropFirst(before)
            #expect(during.contains { $0.status == 503 }, "a frozen store must be answered 503")
            print("drill frozen 6 s: \(during.filter { $0.status == 503 }.count) requests answered 503 while frozen, recovery \(String(format: "%.2f", recovered.seconds)) s after the thaw")
        }
    }

    @Test func aNodeStartedBeforeItsDatabaseWaitsForIt() async throws {
        let cluster = try ThrowawayCluster()
        let logs = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let starting = Task { try await ServeProcess.start(["--database", cluster.url, "--database-wait", "60"], logDirectory: logs) }
        try await Task.sleep(for: .seconds(2))
        try cluster.start()
        let node = try await starting.value
        #expect(node.output.contains("Waiting for PostgreSQL"), "\(node.output.prefix(2000))")
        var client = try ProtocolClient(node.server)
        try await client.register()
        try await node.stop()
        // Without the wait it fails at once, saying why.
        let absent = try ThrowawayCluster()
        let failed = try? await ServeProcess.start(["--database", absent.url, "--database-wait", "0"], logDirectory: logs, seconds: 20)
        #expect(failed == nil)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
