// Complete MobileFirst flows per second against a real Gatehouse server, in-process on loopback.
//
// Each flow: register a new client (JWS signed with an RSA key from a small pre-generated pool) → preauthorize
// `accessRestricted` (401 challenge) → answer the PIN (200) → authorize (302 with a code) → token (200).
// Run through `scripts/bench` for a release build.
import AsyncHTTPClient
import BenchmarkSupport
import Foundation
import GatehouseHTTP
import GatehouseProtocol
import GatehouseServer
import GatehouseSQLite
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
// The log handler of `gatehouse serve`.
StandardErrorLogHandler.bootstrap()

// Measured with --event-loop-executor: a client_credentials token a quarter cheaper, a round and the unprotected
// endpoint dearer, a complete flow about 8 % dearer; so `gatehouse serve` keeps Dispatch's pool.
if options.eventLoopExecutor {
    guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
        print("Swift concurrency could not be moved onto NIO's event loops")
        exit(1)
    }
}
print("Swift concurrency on \(options.eventLoopExecutor ? "NIO's event loops" : "Dispatch's pool (as gatehouse serve)"); "
      + "connections' tasks \(options.connectionsOnEventLoop ? "on their event loop" : "on the shared pool")")

let policyYAML = benchmarkPolicyYAML

/// Runs `body` against a Gatehouse server on 127.0.0.1 with a fresh data directory, then stops it.
func withServer<T: Sendable>(_ body: (_ baseURL: String, _ dataDirectory: String) async throws -> T) async throws -> T {
    let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("gatehouse-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let policyPath = (directory as NSString).appendingPathComponent("policy.yaml")
    try policyYAML.write(toFile: policyPath, atomically: true, encoding: .utf8)

    var configuration = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: directory))
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.policyPath = policyPath
    configuration.adapters = [ResourceAdapter()]
    configuration.connectionTasksOnEventLoop = options.connectionsOnEventLoop
    var logger = Logger(label: "gatehouse-bench")
    logger.logLevel = .warning

    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = try await Gatehouse.makeApplication(configuration, logger: logger) { port in continuation.yield(port) }
    return try await running(app, ports: ports, continuation: continuation, logger: logger) { port in
        try await body("http://127.0.0.1:\(port)", directory)
    }
}

/// Runs `app` until `body`, given the port `ports` yields once the app listens, returns; then stops it.
func running<T: Sendable>(
    _ app: some Service, ports: AsyncStream<Int>, continuation: AsyncStream<Int>.Continuation, logger: Logger,
    _ body: (_ port: Int) async throws -> T
) async throws -> T {
    let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    let task = Task {
        defer { continuation.finish() }
        try await group.run()
    }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else {
        _ = await task.result
        throw FlowError(step: .register, detail: "the server did not start")
    }
    do {
        let result = try await body(port)
        await group.triggerGracefulShutdown()
        _ = await task.result
        return result
    } catch {
        await group.triggerGracefulShutdown()
        _ = await task.result
        throw error
    }
}

/// One worker: flows back to back until the deadline or the flow cap.
func worker(client: FlowClient, keys: [ClientKeyPair], tickets: Tickets, deadline: ContinuousClock.Instant) async -> WorkerResult {
    var result = WorkerResult()
    let clock = ContinuousClock()
    while clock.now < deadline, !Task.isCancelled, let ticket = tickets.take() {
        let start = clock.now
        do {
            let timing = try await client.run(key: keys[ticket % keys.count])
            result.latencies.append(clock.now - start)
            for i in result.stepTotals.indices { result.stepTotals[i] += timing.steps[i] }
            result.signingTotal += timing.signing
        } catch {
            result.errors += 1
            let sample = "\(error)"
            if result.errorSamples.count < 5, !result.errorSamples.contains(sample) { result.errorSamples.append(sample) }
        }
    }
    return result
}

/// The whole benchmark; returns the process exit status.
func runBenchmark() async throws -> Int32 {
    // Client keys are client cost, not server cost: a small pool, reused (each registration still gets a new client id).
    let keyCount = 8
    print("Generating \(keyCount) client RSA-2048 keys…")
    let keys = try (0..<keyCount).map { _ in try ClientKeyPair() }

    var httpConfiguration = HTTPClient.Configuration(
        redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)))
    httpConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, options.workers))
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)

    let status: Int32
    do {
        status = try await withServer { baseURL, directory in
            let client = FlowClient(
                http: http, api: baseURL + "/mfp/api", application: ApplicationData(id: "com.bench.app", clientPlatform: "ios", version: "1.0"))
            print("Gatehouse on \(baseURL), SQLite in \(directory), log level warning")

            // One flow first, so that a broken setup fails loudly instead of printing errors per second.
            let warmUp: FlowTiming
            do {
                warmUp = try await client.run(key: keys[0])
            } catch {
                print("warm-up flow failed: \(error)")
                return 1
            }
            if options.operations {
                // Clients that completed a flow: their rounds are those of an already-successful client. One client per
                // wrk connection, so that rounds in flight are of different clients (as an app's are), not waiting in
                // turn for one client's lock.
                var clientIDs = [warmUp.clientID]
                for index in 1..<max(options.connections, 8) { clientIDs.append(try await client.run(key: keys[index % keys.count]).clientID) }
                return try await withBareHummingbird { floorURL in
                    try await withBareNIO { nioURL in
                        let load = OperationLoad(baseURL: baseURL, floorURL: floorURL, nioURL: nioURL, token: warmUp.accessToken,
                                                 clientIDs: clientIDs, seconds: options.seconds, connections: options.connections,
                                                 only: options.only, requestedRounds: options.rounds)
                        // wrk is waited for on a thread of its own, never on a thread that may serve the server's tasks.
                        return try await NIOThreadPool.singleton.runIfActive { try load.report() }
                    }
                }
            }

            print("Running \(options.workers) workers for \(fixed(options.seconds)) s (at most \(options.maxFlows) flows)…")
            let tickets = Tickets(limit: options.maxFlows)
            let clock = ContinuousClock()
            let start = clock.now
            let deadline = start + .milliseconds(Int64(options.seconds * 1000))
            let total = await withTaskGroup(of: WorkerResult.self) { group in
                for _ in 0..<options.workers {
                    group.addTask { await worker(client: client, keys: keys, tickets: tickets, deadline: deadline) }
                }
                var total = WorkerResult()
                for await result in group { total.merge(result) }
                return total
            }
            let elapsed = (clock.now - start).seconds
            report(total, elapsed: elapsed)
            return total.latencies.isEmpty ? 1 : 0
        }
    } catch {
        print("benchmark failed: \(error)")
        try await http.shutdown()
        return 1
    }
    try await http.shutdown()
    return status
}

func report(_ total: WorkerResult, elapsed: Double) {
    let flows = total.latencies.count
    let ms = total.latencies.map(\.milliseconds).sorted()
    let mean = ms.isEmpty ? 0 : ms.reduce(0, +) / Double(ms.count)
    let rate = elapsed > 0 ? Double(flows) / elapsed : 0
    func perFlow(_ d: Duration) -> String { fixed(flows > 0 ? d.milliseconds / Double(flows) : 0, 2) }
    print("""

        workers:          \(options.workers)
        flows:            \(flows)
        errors:           \(total.errors)
        elapsed:          \(fixed(elapsed, 2)) s
        flows/s:          \(fixed(rate))
        latency (ms):     mean \(fixed(mean, 2)), p50 \(fixed(percentile(ms, 0.50), 2)), p99 \(fixed(percentile(ms, 0.99), 2))
        steps (mean ms):  \(FlowStep.allCases.map { "\($0.name) \(perFlow(total.stepTotals[$0.rawValue]))" }.joined(separator: ", "))
        client signing:   \(perFlow(total.signingTotal)) ms per flow (2 RS256 signatures)
        """)
    for sample in total.errorSamples { print("error sample:     \(sample)") }
    print("flows/s: \(fixed(rate))")
}

let status = try await runBenchmark()
exit(status)
