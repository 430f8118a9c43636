// The gateway's overhead, in one run: HTTP requests/s and WebSocket echo messages/s through the gateway divided
// by the same straight to the upstream and through nginx (a plain reverse proxy with keep-alive to the same
// upstream), the CPU per request or message of the gateway and of nginx (from /proc), and the gateway's memory per
// idle authenticated WebSocket connection.
// The upstream (an echo service) and the load run in this process; the gateway runs as a child process (this
// executable with `--serve-gateway`) behind a `Basic` realm. Run it through `scripts/bench-gateway`.
import GatehouseEcho
import BenchmarkSupport
import Foundation
import GatehouseGateway
import GatehouseHTTP
import Hummingbird
import Logging
import ServiceLifecycle

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--serve-gateway", arguments.count == 4 {
    try await GatewayChild.run(upstream: arguments[1], portFile: arguments[2], jwksURL: arguments[3])
    exit(0)
}

var seconds = 5.0
var connections = 16
var idle: [IdleMemory.Count] = [.exactly(1000), .maximum]
var rounds = 2
var httpOnly = false
var handshakesOnly = false
var memoryOnly = false
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
    case "--idle":
        index += 1
        guard index < arguments.count, let counts = IdleMemory.Count.parse(arguments[index]) else {
            FileHandle.standardError.write(Data("--idle needs counts of idle WebSockets, a number or max, comma-separated (1000,max)\n".utf8))
            exit(2)
        }
        idle = counts
    case "--memory-only": memoryOnly = true
    case "--rounds": rounds = Int(value("--rounds", 1...50))
    case "--http-only": httpOnly = true
    case "--handshakes-only": handshakesOnly = true
    default:
        print("usage: GatewayBenchmark [--seconds S (5)] [--connections C (16)] [--idle N,... (1000,max)] [--rounds R (2)] [--http-only | --handshakes-only | --memory-only]")
        exit(arguments[index] == "--help" ? 0 : 2)
    }
    index += 1
}

// The idle WebSockets' count is bounded by the descriptors of this process and of the gateway (which inherits it).
// The gateway, started after, inherits the raised limit.
OpenFileLimit.raise()
var logger = Logger(label: "bench-echo")
logger.logLevel = .error
let (ports, continuation) = AsyncStream<Int>.makeStream()
let echo = EchoService.makeApplication(logger: logger) { port in continuation.yield(port) }
// The key set the token realm verifies the load's token against (fetched once by the gateway).
let (token, jwks) = try await BenchToken.make()
let (jwksPorts, jwksContinuation) = AsyncStream<Int>.makeStream()
let jwksRouter = Router()
jwksRouter.get("/jwks") { _, _ in Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: jwks))) }
let jwksServer = Application(router: jwksRouter, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                             onServerRunning: { jwksContinuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
let echoGroup = ServiceGroup(configuration: .init(services: [echo, jwksServer], gracefulShutdownSignals: [], logger: logger))
let echoTask = Task { try await echoGroup.run() }
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    var iterator = ports.makeAsyncIterator()
    return await iterator.next()
}
guard let echoPort = await firstPort(ports) else { fatalError("the echo upstream did not start") }
guard let jwksPort = await firstPort(jwksPorts) else { fatalError("the key set server did not start") }
let upstream = "http://127.0.0.1:\(echoPort)"
let (child, gatewayPort, relayPort, partsRelayPort, sketchPort) = try GatewayChild.start(upstream: upstream, jwksURL: "http://127.0.0.1:\(jwksPort)/jwks")
let gateway = "http://127.0.0.1:\(gatewayPort)"
let authorization = GatewayChild.authorization
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores shared by the load, the gateway and the upstream")
print("gateway pid \(child.processIdentifier) on \(gateway), upstream on \(upstream); \(Int(seconds)) s per run, \(rounds) rounds each "
      + "(the gateway and nginx back to back, in turns first)")
print("NIO byte relay (the floor of a proxy on NIO: no parsing, no pooling) in the gateway's process on 127.0.0.1:\(relayPort)")
print("NIO HTTP parts relay (the floor of a proxy on NIO's HTTP/1.1 codec) in the gateway's process on 127.0.0.1:\(partsRelayPort)")
print("head-rewriting sketch (heads found and rewritten in the bytes, Authorization checked; not a proxy) on 127.0.0.1:\(sketchPort)\n")

let nginx = try NginxProxy.start(upstreamPort: echoPort)
print("nginx (pid \(nginx.process.processIdentifier), worker per core) on 127.0.0.1:\(nginx.port), the same upstream, keepalive 512")

/// The CPU seconds `body` costs the gateway process and the nginx processes (from /proc), user and kernel, with its
/// result.
func costing<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> (T, gateway: ProcessCPU.Split, nginx: ProcessCPU.Split) {
    let gatewayBefore = ProcessCPU.split(of: child.processIdentifier)
    let nginxBefore = ProcessCPU.treeSplit(of: nginx.process.processIdentifier)
    let result = try await body()
    return (result, ProcessCPU.split(of: child.processIdentifier) - gatewayBefore,
            ProcessCPU.treeSplit(of: nginx.process.processIdentifier) - nginxBefore)
}

/// The gateway's run and nginx's, back to back, the gateway first in odd rounds and nginx in even ones: the machine's
/// drift falls on both.
func inTurns<T>(_ round: Int, isolation: isolated (any Actor)? = #isolation, gateway: () async throws -> T,
                nginx: () async throws -> T) async rethrows -> (gateway: T, nginx: T) {
    if round % 2 == 1 {
        let first = try await gateway()
        return (first, try await nginx())
    }
    let first = try await nginx()
    return (try await gateway(), first)
}

/// WebSocket handshakes on new connections: plain upgrades against KAAZING's extended handshake, in turns, with the
/// gateway's CPU per handshake (``Handshakes``).
@MainActor func measureHandshakes() async throws {
    var plain: [Double] = [], kaazing: [Double] = []
    var plainCPU = ProcessCPU.Split(), kaazingCPU = ProcessCPU.Split(), plainCount = 0.0, kaazingCount = 0.0
    let workers = 4
    for round in 1...rounds {
        let ((p, pCPU, _), (k, kCPU, _)) = try await inTurns(
            round,
            gateway: { try await costing { try Handshakes.rate(port: gatewayPort, kind: .plain, authorization: authorization, workers: workers, seconds: seconds) } },
            nginx: { try await costing { try Handshakes.rate(port: gatewayPort, kind: .kaazing, authorization: authorization, workers: workers, seconds: seconds) } })
        print("WebSocket handshake round \(round): plain upgrade \(fixed(p.perSecond)) /s, KAAZING extended handshake \(fixed(k.perSecond)) /s "
              + "(\(workers) clients, a new connection each, Basic credentials, the upstream connected, closed by the client)")
        plain.append(p.perSecond); kaazing.append(k.perSecond)
        plainCPU += pCPU; plainCount += Double(p.count)
        kaazingCPU += kCPU; kaazingCount += Double(k.count)
    }
    func micros(_ cpu: Double, _ count: Double) -> String { fixed(count > 0 ? cpu * 1e6 / count : 0, 1) }
    print("""

        WebSocket handshakes, KAAZING extended / plain: \(fixed(kaazing.reduce(0, +) / plain.reduce(0, +), 3))  (\(fixed(kaazing.reduce(0, +) / Double(rounds))) / \(fixed(plain.reduce(0, +) / Double(rounds))) per second; \(perRoundRatios(kaazing, plain)))
        gateway CPU per handshake:               plain \(micros(plainCPU.total, plainCount)) µs, KAAZING \(micros(kaazingCPU.total, kaazingCount)) µs (ratio \(fixed(plainCount > 0 && kaazingCount > 0 && plainCPU.total > 0 ? (kaazingCPU.total / kaazingCount) / (plainCPU.total / plainCount) : 0, 2)))

        """)
}

/// The gateway's memory per idle authenticated WebSocket with each of the `--idle` counts open (``IdleMemory``; the
/// maximum from the descriptors held then), measured in a gateway process of its own, started for it: the process
/// that ran the loads keeps the memory they freed resident, and idle WebSockets opened there took that memory
/// without its RSS moving (1,000 open, all counted in its sockets: 0.3 KiB each after the default run's loads, 4 KiB for
/// all of them in another run, against 10.5 KiB each after a 1 s run's loads and 12.2 in a process of their own).
@MainActor func idleMemoryReport() async throws -> String {
    let (process, port, _, _, _) = try GatewayChild.start(upstream: upstream, jwksURL: "http://127.0.0.1:\(jwksPort)/jwks")
    defer {
        process.terminate()
        process.waitUntilExit()
    }
    let gateway = GatewayProcess(pid: process.processIdentifier, port: port, upstreamPort: echoPort)
    print("\nidle authenticated WebSockets through a gateway process of their own (pid \(gateway.pid) on 127.0.0.1:\(port)):")
    let figures = try await IdleMemory.measure(gateway: gateway, authorization: authorization, counts: idle)
    return IdleMemory.report(figures)
}

do {
    if memoryOnly {
        print(try await idleMemoryReport())
        nginx.stop()
        child.terminate()
        child.waitUntilExit()
        exit(0)
    }
    if !httpOnly {
        try await measureHandshakes()
        if handshakesOnly {
            nginx.stop()
            child.terminate()
            child.waitUntilExit()
            exit(0)
        }
    }
    // HTTP, alternating direct, through the gateway and through nginx; CPU per request of the proxy in the path.
    var direct: [Double] = []
    var through: [Double] = []
    var throughTokens: [Double] = []
    var viaNginx: [Double] = []
    var viaRelay: [Double] = []
    var viaParts: [Double] = []
    var partsCPU = ProcessCPU.Split(), partsRequests = 0.0
    var viaSketch: [Double] = []
    var sketchCPU = ProcessCPU.Split(), sketchRequests = 0.0
    var gatewayCPU = ProcessCPU.Split(), tokenCPU = ProcessCPU.Split(), nginxCPU = ProcessCPU.Split(), relayCPU = ProcessCPU.Split()
    var gatewayRequests = 0.0, tokenRequests = 0.0, nginxRequests = 0.0, relayRequests = 0.0
    for round in 1...rounds {
        let d = try Wrk.run(url: upstream + "/echo/hello", connections: 32, seconds: seconds)
        let ((g, gCPU, _), (n, _, nCPU)) = try await inTurns(
            round,
            gateway: { try await costing { try Wrk.run(url: gateway + "/echo/hello", connections: 32, seconds: seconds, authorization: authorization) } },
            nginx: { try await costing { try Wrk.run(url: "http://127.0.0.1:\(nginx.port)/echo/hello", connections: 32, seconds: seconds) } })
        let (t, tCPU, _) = try await costing {
            try Wrk.run(url: gateway + "/token-echo/hello", connections: 32, seconds: seconds, authorization: "Bearer \(token)")
        }
        let (r, rCPU, _) = try await costing { try Wrk.run(url: "http://127.0.0.1:\(relayPort)/echo/hello", connections: 32, seconds: seconds) }
        let (p, pCPU, _) = try await costing { try Wrk.run(url: "http://127.0.0.1:\(partsRelayPort)/echo/hello", connections: 32, seconds: seconds) }
        let (k, kCPU, _) = try await costing {
            try Wrk.run(url: "http://127.0.0.1:\(sketchPort)/echo/hello", connections: 32, seconds: seconds, authorization: authorization)
        }
        guard d.non2xx == 0, g.non2xx == 0, t.non2xx == 0, n.non2xx == 0, r.non2xx == 0, p.non2xx == 0, k.non2xx == 0 else {
            throw Wrk.Failure(description: "non-2xx answers: direct \(d.non2xx), gateway \(g.non2xx), token realm \(t.non2xx), nginx \(n.non2xx), "
                              + "byte relay \(r.non2xx), HTTP parts relay \(p.non2xx), sketch \(k.non2xx)")
        }
        print("HTTP round \(round): direct \(fixed(d.requestsPerSecond)) req/s, gateway \(fixed(g.requestsPerSecond)) req/s "
              + "(token realm \(fixed(t.requestsPerSecond))), nginx \(fixed(n.requestsPerSecond)) req/s, NIO byte relay \(fixed(r.requestsPerSecond)) req/s, "
              + "NIO HTTP parts relay \(fixed(p.requestsPerSecond)) req/s, head-rewriting sketch \(fixed(k.requestsPerSecond)) req/s")
        direct.append(d.requestsPerSecond)
        through.append(g.requestsPerSecond)
        throughTokens.append(t.requestsPerSecond)
        viaNginx.append(n.requestsPerSecond)
        gatewayCPU += gCPU; gatewayRequests += g.requestsPerSecond * seconds
        tokenCPU += tCPU; tokenRequests += t.requestsPerSecond * seconds
        nginxCPU += nCPU; nginxRequests += n.requestsPerSecond * seconds
        viaRelay.append(r.requestsPerSecond)
        relayCPU += rCPU; relayRequests += r.requestsPerSecond * seconds
        viaParts.append(p.requestsPerSecond)
        partsCPU += pCPU; partsRequests += p.requestsPerSecond * seconds
        viaSketch.append(k.requestsPerSecond)
        sketchCPU += kCPU; sketchRequests += k.requestsPerSecond * seconds
    }
    let httpRatio = through.reduce(0, +) / direct.reduce(0, +)
    let httpNginxRatio = through.reduce(0, +) / viaNginx.reduce(0, +)

    // WebSocket echo, alternating likewise.
    var wsDirect: [Double] = []
    var wsThrough: [Double] = []
    var wsNginx: [Double] = []
    var wsRelay: [Double] = []
    var wsGatewayCPU = ProcessCPU.Split(), wsNginxCPU = ProcessCPU.Split(), wsGatewayMessages = 0.0, wsNginxMessages = 0.0
    var wsRelayCPU = ProcessCPU.Split(), wsRelayMessages = 0.0
    for round in stride(from: 1, through: httpOnly ? 0 : rounds, by: 1) {
        let d = try await EchoLoad.rate(url: "ws://127.0.0.1:\(echoPort)/echo", authorization: nil, connections: connections, seconds: seconds)
        let ((g, gCPU, _), (n, _, nCPU)) = try await inTurns(
            round,
            gateway: {
                try await costing {
                    try await EchoLoad.rate(url: "ws://127.0.0.1:\(gatewayPort)/echo", authorization: authorization, connections: connections, seconds: seconds)
                }
            },
            nginx: {
                try await costing {
                    try await EchoLoad.rate(url: "ws://127.0.0.1:\(nginx.port)/echo", authorization: nil, connections: connections, seconds: seconds)
                }
            })
        let (r, rCPU, _) = try await costing {
            try await EchoLoad.rate(url: "ws://127.0.0.1:\(relayPort)/echo", authorization: nil, connections: connections, seconds: seconds)
        }
        print("WebSocket round \(round): direct \(fixed(d)) msg/s, gateway \(fixed(g)) msg/s, nginx \(fixed(n)) msg/s, "
              + "NIO byte relay \(fixed(r)) msg/s (\(connections) connections)")
        wsRelay.append(r)
        wsRelayCPU += rCPU; wsRelayMessages += r * seconds
        wsDirect.append(d)
        wsThrough.append(g)
        wsNginx.append(n)
        wsGatewayCPU += gCPU; wsGatewayMessages += g * seconds
        wsNginxCPU += nCPU; wsNginxMessages += n * seconds
    }
    let wsRatio = wsThrough.reduce(0, +) / wsDirect.reduce(0, +)
    let wsNginxRatio = wsThrough.reduce(0, +) / wsNginx.reduce(0, +)
    func micros(_ cpu: Double, _ count: Double) -> String { fixed(count > 0 ? cpu * 1e6 / count : 0, 1) }
    /// "T µs (user U, kernel K)" per operation.
    func perOperation(_ cpu: ProcessCPU.Split, _ count: Double) -> String {
        "\(micros(cpu.total, count)) µs (user \(micros(cpu.user, count)), kernel \(micros(cpu.kernel, count)))"
    }
    func ratio(_ a: ProcessCPU.Split, _ aCount: Double, _ b: ProcessCPU.Split, _ bCount: Double) -> String {
        fixed(aCount > 0 && bCount > 0 && b.total > 0 ? (a.total / aCount) / (b.total / bCount) : 0, 2)
    }

    // Memory per idle authenticated WebSocket connection.
    var idleMemory = ""
    if !httpOnly { idleMemory = try await idleMemoryReport() }

    print("""

        HTTP through the gateway / direct:       \(fixed(httpRatio, 3))  (\(fixed(through.reduce(0, +) / Double(rounds))) / \(fixed(direct.reduce(0, +) / Double(rounds))) req/s)
        HTTP gateway / nginx:                    \(fixed(httpNginxRatio, 3))  (nginx \(fixed(viaNginx.reduce(0, +) / Double(rounds))) req/s; \(perRoundRatios(through, viaNginx)))
        HTTP CPU per request:                    gateway \(perOperation(gatewayCPU, gatewayRequests)), nginx \(perOperation(nginxCPU, nginxRequests)) (ratio \(ratio(gatewayCPU, gatewayRequests, nginxCPU, nginxRequests)))
        HTTP NIO byte relay (floor) / nginx:     \(fixed(viaRelay.reduce(0, +) / viaNginx.reduce(0, +), 3))  (\(fixed(viaRelay.reduce(0, +) / Double(rounds))) req/s); CPU per request \(perOperation(relayCPU, relayRequests)) (ratio \(ratio(relayCPU, relayRequests, nginxCPU, nginxRequests)))
        HTTP NIO HTTP parts relay / nginx:       \(fixed(viaParts.reduce(0, +) / viaNginx.reduce(0, +), 3))  (\(fixed(viaParts.reduce(0, +) / Double(rounds))) req/s); CPU per request \(perOperation(partsCPU, partsRequests)) (ratio \(ratio(partsCPU, partsRequests, nginxCPU, nginxRequests)))
        HTTP head-rewriting sketch / nginx:      \(fixed(viaSketch.reduce(0, +) / viaNginx.reduce(0, +), 3))  (\(fixed(viaSketch.reduce(0, +) / Double(rounds))) req/s); CPU per request \(perOperation(sketchCPU, sketchRequests)) (ratio \(ratio(sketchCPU, sketchRequests, nginxCPU, nginxRequests)))
        HTTP gateway / NIO byte relay:           \(fixed(through.reduce(0, +) / viaRelay.reduce(0, +), 3)); gateway / NIO HTTP parts relay: \(fixed(through.reduce(0, +) / viaParts.reduce(0, +), 3))
        HTTP token realm (Bearer) / nginx:       \(fixed(throughTokens.reduce(0, +) / viaNginx.reduce(0, +), 3))  (\(fixed(throughTokens.reduce(0, +) / Double(rounds))) req/s); CPU per request \(perOperation(tokenCPU, tokenRequests)) (ratio \(ratio(tokenCPU, tokenRequests, nginxCPU, nginxRequests)))
        """)
    if !httpOnly {
        print("""
        WebSocket echo through the gateway / direct: \(fixed(wsRatio, 3))  (\(fixed(wsThrough.reduce(0, +) / Double(rounds))) / \(fixed(wsDirect.reduce(0, +) / Double(rounds))) msg/s)
        WebSocket echo gateway / nginx:          \(fixed(wsNginxRatio, 3))  (nginx \(fixed(wsNginx.reduce(0, +) / Double(rounds))) msg/s; \(perRoundRatios(wsThrough, wsNginx)))
        WebSocket CPU per message:               gateway \(perOperation(wsGatewayCPU, wsGatewayMessages)), nginx \(perOperation(wsNginxCPU, wsNginxMessages)) (ratio \(ratio(wsGatewayCPU, wsGatewayMessages, wsNginxCPU, wsNginxMessages)))
        WebSocket NIO byte relay (floor) / nginx: \(fixed(wsRelay.reduce(0, +) / wsNginx.reduce(0, +), 3))  (\(fixed(wsRelay.reduce(0, +) / Double(rounds))) msg/s); CPU per message \(perOperation(wsRelayCPU, wsRelayMessages)) (ratio \(ratio(wsRelayCPU, wsRelayMessages, wsNginxCPU, wsNginxMessages)))
        WebSocket gateway / NIO byte relay:      \(fixed(wsThrough.reduce(0, +) / wsRelay.reduce(0, +), 3))
        \(idleMemory)
        """)
    }
} catch {
    print("benchmark failed: \(error)")
    nginx.stop()
    child.terminate()
    child.waitUntilExit()
    exit(1)
}
nginx.stop()
child.terminate()
child.waitUntilExit()
await echoGroup.triggerGracefulShutdown()
_ = await echoTask.result
