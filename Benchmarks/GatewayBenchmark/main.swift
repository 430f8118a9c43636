// The gateway's overhead, in one run: HTTP requests/s and WebSocket echo messages/s through the gateway divided
// by the same straight to the upstream, and the gateway's memory per idle authenticated WebSocket connection.
// The upstream (an echo service) and the load run in this process; the gateway runs as a child process (this
// executable with `--serve-gateway`) behind a `Basic` realm. Run it through `scripts/bench-gateway`.
import BenchmarkSupport
import Foundation
import GatehouseGateway
import Hummingbird
import Logging
import ServiceLifecycle

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--serve-gateway", arguments.count == 3 {
    try await GatewayChild.run(upstream: arguments[1], portFile: arguments[2])
    exit(0)
}

var seconds = 5.0
var connections = 16
var idle = 1000
var index = 0
@MainActor func value(_ name: String, _ range: ClosedRange<Double>) -> Double {
    index += 1
    guard index < arguments.count, let number = Double(arguments[index]), range.contains(number) else {
        FileHandle.standardError.write(Data("\(name) needs a number in \(range)\n".utf8))
        exit(2)
    }
    return number
}
while index < arguments.count {
    switch arguments[index] {
    case "--seconds": seconds = value("--seconds", 1...600)
    case "--connections": connections = Int(value("--connections", 1...512))
    case "--idle": idle = Int(value("--idle", 1...5000))
    default:
        print("usage: GatewayBenchmark [--seconds S (5)] [--connections C (16)] [--idle N (1000)]")
        exit(arguments[index] == "--help" ? 0 : 2)
    }
    index += 1
}

var logger = Logger(label: "bench-echo")
logger.logLevel = .error
let (ports, continuation) = AsyncStream<Int>.makeStream()
let echo = EchoService.makeApplication(logger: logger) { port in continuation.yield(port) }
let echoGroup = ServiceGroup(configuration: .init(services: [echo], gracefulShutdownSignals: [], logger: logger))
let echoTask = Task { try await echoGroup.run() }
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    var iterator = ports.makeAsyncIterator()
    return await iterator.next()
}
guard let echoPort = await firstPort(ports) else { fatalError("the echo upstream did not start") }
let upstream = "http://127.0.0.1:\(echoPort)"
let (child, gatewayPort) = try GatewayChild.start(upstream: upstream)
let gateway = "http://127.0.0.1:\(gatewayPort)"
let authorization = GatewayChild.authorization
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores shared by the load, the gateway and the upstream")
print("gateway pid \(child.processIdentifier) on \(gateway), upstream on \(upstream); \(Int(seconds)) s per run, 2 rounds each\n")

do {
    // HTTP, alternating direct and through the gateway.
    var direct: [Double] = []
    var through: [Double] = []
    for round in 1...2 {
        let d = try Wrk.run(url: upstream + "/echo/hello", connections: 32, seconds: seconds)
        let g = try Wrk.run(url: gateway + "/echo/hello", connections: 32, seconds: seconds, authorization: authorization)
        guard d.non2xx == 0, g.non2xx == 0 else { throw Wrk.Failure(description: "non-2xx answers: direct \(d.non2xx), gateway \(g.non2xx)") }
        print("HTTP round \(round): direct \(fixed(d.requestsPerSecond)) req/s, through the gateway \(fixed(g.requestsPerSecond)) req/s")
        direct.append(d.requestsPerSecond)
        through.append(g.requestsPerSecond)
    }
    let httpRatio = through.reduce(0, +) / direct.reduce(0, +)

    // WebSocket echo, alternating likewise.
    var wsDirect: [Double] = []
    var wsThrough: [Double] = []
    for round in 1...2 {
        let d = try await EchoLoad.rate(url: "ws://127.0.0.1:\(echoPort)/echo", authorization: nil, connections: connections, seconds: seconds)
        let g = try await EchoLoad.rate(url: "ws://127.0.0.1:\(gatewayPort)/echo", authorization: authorization, connections: connections, seconds: seconds)
        print("WebSocket round \(round): direct \(fixed(d)) msg/s, through the gateway \(fixed(g)) msg/s (\(connections) connections)")
        wsDirect.append(d)
        wsThrough.append(g)
    }
    let wsRatio = wsThrough.reduce(0, +) / wsDirect.reduce(0, +)

    // Memory per idle authenticated WebSocket connection.
    try await Task.sleep(for: .seconds(1))
    let before = residentMemory(of: child.processIdentifier) ?? 0
    let (opened, after) = try await EchoLoad.whileIdle(
        url: "ws://127.0.0.1:\(gatewayPort)/echo", authorization: authorization, count: idle, timeout: .seconds(120)
    ) { opened in (opened, residentMemory(of: child.processIdentifier) ?? 0) }
    let perConnection = opened > 0 ? Double(after - before) / Double(opened) : 0

    print("""

        HTTP through the gateway / direct:       \(fixed(httpRatio, 3))  (\(fixed(through.reduce(0, +) / 2)) / \(fixed(direct.reduce(0, +) / 2)) req/s)
        WebSocket echo through the gateway / direct: \(fixed(wsRatio, 3))  (\(fixed(wsThrough.reduce(0, +) / 2)) / \(fixed(wsDirect.reduce(0, +) / 2)) msg/s)
        gateway memory: \(before / 1024) KiB before, \(after / 1024) KiB with \(opened) idle authenticated WebSockets open
        memory per idle authenticated WebSocket through the gateway: \(fixed(perConnection / 1024)) KiB (client side and upstream side of the relay)
        """)
} catch {
    print("benchmark failed: \(error)")
    child.terminate()
    child.waitUntilExit()
    exit(1)
}
child.terminate()
child.waitUntilExit()
await echoGroup.triggerGracefulShutdown()
_ = await echoTask.result
