// Complete MobileFirst flows per second on real `gatehouse serve` processes: one node on SQLite (as shipped, and with
// an fsync per commit for comparison), one node on
// PostgreSQL, two nodes on one PostgreSQL, in one run; with the CPU each node and PostgreSQL spent per flow (from
// the kernel's counters), the store operations per flow (from each node's /metrics), and from them a projection of
// flows/s for N nodes and a C-core PostgreSQL (the two cores here cannot show scaling).
//
// Run through `scripts/bench-multinode` (release builds, a durable throwaway PostgreSQL with two empty databases).
import AsyncHTTPClient
import BenchmarkSupport
import Foundation
import GatehouseProtocol
import Synchronization

struct Options {
    var binary = ""
    var seconds = 10.0
    var warmUp = 2.0
    var workers = 16
    /// Two empty databases (one per PostgreSQL setup) and the postmaster's pid.
    var postgresURLs: [String] = []
    var postgresPID: Int32 = 0
    /// Only one setup, for a profiler or a quick comparison: `sqlite` (the node as shipped; no PostgreSQL needed)
    /// or `postgres` (one node on PostgreSQL).
    var only: String?

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--binary": options.binary = value()
            case "--seconds": options.seconds = number(value(), 1...3600, "--seconds")
            case "--warm-up": options.warmUp = number(value(), 0...60, "--warm-up")
            case "--workers": options.workers = Int(number(value(), 1...256, "--workers"))
            case "--postgres-url": options.postgresURLs.append(value())
            case "--postgres-pid": options.postgresPID = Int32(number(value(), 1...4_194_304, "--postgres-pid"))
            case "--only":
                options.only = value()
                if options.only != "sqlite", options.only != "postgres" { fail("--only takes sqlite or postgres") }
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
        if options.binary.isEmpty { fail("--binary is required") }
        if options.only != "sqlite", options.postgresURLs.count != 2 || options.postgresPID == 0 { fail("two --postgres-url and --postgres-pid are required") }
        return options
    }

    static func number(_ text: String, _ range: ClosedRange<Double>, _ name: String) -> Double {
        guard let value = Double(text), range.contains(value) else { fail("\(name) must be a number in \(range)") }
        return value
    }

    static func fail(_ message: String) -> Never {
        print("MultiNodeBenchmark: \(message)\nusage: MultiNodeBenchmark --binary PATH --postgres-url URL --postgres-url URL --postgres-pid PID [--seconds S] [--warm-up S] [--workers N]\n       MultiNodeBenchmark --binary PATH --only sqlite|postgres [--postgres-url URL --postgres-url URL --postgres-pid PID] [--seconds S] [--warm-up S] [--workers N]")
        exit(2)
    }
}

let policyYAML = benchmarkPolicyYAML

/// Flows completed inside the measuring window, and failures.
final class Tally: Sendable {
    private let state = Mutex<(flows: Int, failures: Int, latencies: [Double], sample: String?)>((0, 0, [], nil))
    let measuring = Atomic<Bool>(false)
    let stop = Atomic<Bool>(false)

    func flow(_ milliseconds: Double) {
        guard measuring.load(ordering: .relaxed) else { return }
        state.withLock { $0.flows += 1; $0.latencies.append(milliseconds) }
    }

    func failure(_ text: String) {
        state.withLock { $0.failures += 1; if $0.sample == nil { $0.sample = text } }
    }

    var summary: (flows: Int, failures: Int, latencies: [Double], sample: String?) { state.withLock { $0 } }
}

/// One setup's figures.
struct Measurement {
    let name: String
    let nodes: Int
    let flowsPerSecond: Double
    let p50: Double
    let p99: Double
    let failures: Int
    /// CPU ms per flow of all nodes together (and the part of it in the kernel), and of PostgreSQL (0 on SQLite).
    let nodeCPU: Double
    let nodeKernelCPU: Double
    let postgresCPU: Double
    let storeOperations: Double
}

/// The sum of a node's store operations so far (`gatehouse_store_operation_duration_seconds_count`).
func storeOperations(_ node: NodeProcess, http: HTTPClient) async -> Double {
    var request = HTTPClientRequest(url: node.base + "/metrics")
    request.method = .GET
    guard let response = try? await http.execute(request, timeout: .seconds(10)),
          let body = try? await response.body.collect(upTo: 16 << 20) else { return 0 }
    return String(buffer: body).split(separator: "\n")
        .filter { $0.hasPrefix("gatehouse_store_operation_duration_seconds_count") }
        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        .reduce(0, +)
}

func measure(_ name: String, arguments: [String], nodes count: Int, options: Options, keys: [ClientKeyPair], http: HTTPClient,
             logs: URL) async throws -> Measurement {
    var nodes: [NodeProcess] = []
    for _ in 0..<count { nodes.append(try await NodeProcess.start(binary: options.binary, arguments: arguments, logDirectory: logs)) }
    let client = FlowClient(http: http, apis: nodes.map(\.api), application: ApplicationData(id: "com.bench.app", clientPlatform: "ios", version: "1.0"))
    _ = try await client.run(key: keys[0])   // a broken setup fails here, loudly
    let tally = Tally()
    let workers = options.workers
    let load = Task {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var flow = 0
                    while !tally.stop.load(ordering: .relaxed) {
                        var turn = client
                        turn.offset = worker + flow * FlowStep.allCases.count
                        let start = ContinuousClock.now
                        do {
                            _ = try await turn.run(key: keys[(worker + flow) % keys.count])
                            tally.flow((ContinuousClock.now - start).milliseconds)
                        } catch {
                            tally.failure("\(error)")
                        }
                        flow += 1
                    }
                }
            }
        }
    }
    try await Task.sleep(for: .milliseconds(Int64(options.warmUp * 1000)))
    var operationsBefore = 0.0
    for node in nodes { operationsBefore += await storeOperations(node, http: http) }
    let nodeCPUBefore = nodes.map { ProcessCPU.split(of: $0.pid) }.reduce(ProcessCPU.Split(), +)
    let postgres = arguments.contains("--database")
    let postgresBefore = postgres ? ProcessCPU.treeSeconds(of: options.postgresPID) : 0
    tally.measuring.store(true, ordering: .relaxed)
    let start = ContinuousClock.now
    try await Task.sleep(for: .milliseconds(Int64(options.seconds * 1000)))
    tally.measuring.store(false, ordering: .relaxed)
    let elapsed = (ContinuousClock.now - start).seconds
    let nodeCPU = nodes.map { ProcessCPU.split(of: $0.pid) }.reduce(ProcessCPU.Split(), +) - nodeCPUBefore
    let postgresCPU = postgres ? ProcessCPU.treeSeconds(of: options.postgresPID) - postgresBefore : 0
    var operationsAfter = 0.0
    for node in nodes { operationsAfter += await storeOperations(node, http: http) }
    tally.stop.store(true, ordering: .relaxed)
    await load.value
    for node in nodes { await node.stop() }

    let s = tally.summary
    let flows = max(s.flows, 1)
    let sorted = s.latencies.sorted()
    func percentile(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    if let sample = s.sample { print("  \(name): first failure: \(sample)") }
    // The operations a scrape counts between the two scrapes include the first scrape's own reads: none (a scrape
    // reads no store), so the difference is the flows' (with the flows outside the window at its edges: small).
    return Measurement(
        name: name, nodes: count, flowsPerSecond: Double(s.flows) / elapsed, p50: percentile(0.5), p99: percentile(0.99),
        failures: s.failures, nodeCPU: nodeCPU.total * 1000 / Double(flows), nodeKernelCPU: nodeCPU.kernel * 1000 / Double(flows), postgresCPU: postgresCPU * 1000 / Double(flows),
        storeOperations: (operationsAfter - operationsBefore) / Double(flows))
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let keys = try (0..<8).map { _ in try ClientKeyPair() }
var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)))
configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, options.workers))
let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gatehouse-multinode-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
let policy = work.appendingPathComponent("policy.yaml")
try policyYAML.write(to: policy, atomically: true, encoding: .utf8)

print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, shared by the nodes, PostgreSQL and this load (\(options.workers) workers)")
var results: [Measurement] = []
/// The node arguments of the SQLite setup as shipped and of one node on the first PostgreSQL database.
let sqliteArguments = ["--policy", policy.path, "--data", work.appendingPathComponent("data").path]
let postgresArguments = { ["--policy", policy.path, "--database", options.postgresURLs[0]] }

/// Runs one setup alone (`--only`), prints its line and exits.
func measureOnly(_ setup: String) async throws -> Never {
    let r = setup == "sqlite"
        ? try await measure("SQLite, 1 node", arguments: sqliteArguments, nodes: 1, options: options, keys: keys, http: http, logs: work)
        : try await measure("PostgreSQL, 1 node", arguments: postgresArguments(), nodes: 1, options: options, keys: keys, http: http, logs: work)
    print(r.name + String(format: ": %.1f flows/s, p50 %.1f ms, p99 %.1f ms, %d failed, node CPU %.3f ms/flow (kernel %.3f), PostgreSQL CPU %.3f ms/flow, %.1f store ops/flow",
                 r.flowsPerSecond, r.p50, r.p99, r.failures, r.nodeCPU, r.nodeKernelCPU, r.postgresCPU, r.storeOperations))
    try? await http.shutdown()
    try? FileManager.default.removeItem(at: work)
    exit(r.failures == 0 ? 0 : 1)
}

do {
    if let only = options.only { try await measureOnly(only) }
    results.append(try await measure("SQLite, 1 node", arguments: sqliteArguments, nodes: 1, options: options, keys: keys, http: http, logs: work))
    results.append(try await measure("SQLite fsync/commit", arguments: ["--policy", policy.path, "--data", work.appendingPathComponent("data-full").path,
                                                                          "--sqlite-durability", "full"],
                                     nodes: 1, options: options, keys: keys, http: http, logs: work))
    results.append(try await measure("PostgreSQL, 1 node", arguments: postgresArguments(), nodes: 1, options: options, keys: keys, http: http, logs: work))
    results.append(try await measure("PostgreSQL, 2 nodes", arguments: ["--policy", policy.path, "--database", options.postgresURLs[1]],
                                     nodes: 2, options: options, keys: keys, http: http, logs: work))
} catch {
    print("benchmark failed: \(error)")
    try? await http.shutdown().get()
    exit(1)
}
try? await http.shutdown()
try? FileManager.default.removeItem(at: work)

print("")
print("setup                  flows/s   p50 ms   p99 ms  failed   node CPU ms/flow  (kernel)  PostgreSQL CPU ms/flow  store ops/flow")
for r in results {
    print(r.name.padding(toLength: 20, withPad: " ", startingAt: 0) + String(format: " %9.1f %8.1f %8.1f %7d %18.3f %9.3f %23.3f %15.1f", r.flowsPerSecond, r.p50, r.p99, r.failures,
                 r.nodeCPU, r.nodeKernelCPU, r.postgresCPU, r.storeOperations))
}
let sqlite = results[0], full = results[1], one = results[2], two = results[3]
print("")
print("SQLite durability (same run): synchronous=NORMAL ÷ FULL = \(fixed(sqlite.flowsPerSecond / full.flowsPerSecond, 3)) in flows/s, \(fixed(sqlite.nodeCPU / full.nodeCPU, 3)) in CPU per flow")
print("ratios (same run): PostgreSQL 1 node ÷ SQLite = \(fixed(one.flowsPerSecond / sqlite.flowsPerSecond, 3)); 2 nodes ÷ 1 node = \(fixed(two.flowsPerSecond / one.flowsPerSecond, 3))")
print("CPU per flow ÷ SQLite's: node on PostgreSQL \(fixed(one.nodeCPU / sqlite.nodeCPU, 3)), with PostgreSQL's \(fixed((one.nodeCPU + one.postgresCPU) / sqlite.nodeCPU, 3))")

// Projection: each node of K cores gives K·1000 / (node CPU ms per flow) flows/s; PostgreSQL of C cores gives
// C·1000 / (its CPU ms per flow); the cluster gives the smaller. From the two-node run's costs.
let nodeCost = two.nodeCPU, postgresCost = max(two.postgresCPU, 0.001)
print("")
print("projection from the 2-node run (node \(fixed(nodeCost, 3)) ms, PostgreSQL \(fixed(postgresCost, 3)) ms of CPU per flow; nodes of 2 cores):")
print("  nodes \\ PostgreSQL cores" + [2, 4, 8, 16].map { String(format: "%10d", $0) }.joined())
for n in [1, 2, 4, 8, 16] {
    let row = [2, 4, 8, 16].map { c in String(format: "%10.0f", min(Double(n * 2) * 1000 / nodeCost, Double(c) * 1000 / postgresCost)) }
    print(String(format: "  %-25d", n) + row.joined())
}
print("flows/s: SQLite \(fixed(sqlite.flowsPerSecond)) (fsync per commit: \(fixed(full.flowsPerSecond))), PostgreSQL 1 node \(fixed(one.flowsPerSecond)), 2 nodes \(fixed(two.flowsPerSecond))")
exit(results.allSatisfy { $0.failures == 0 } ? 0 : 1)
