import BenchmarkSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The gateway's memory per idle authenticated WebSocket: its RSS with none open, then with each of several counts
/// open at once (the connections of a count stay open for the next), read from the gateway's own process (checked
/// to be it) while its sockets show every WebSocket asked for open through it — and a projection to
/// ``projectedCount``.
enum IdleMemory {
    /// The count the memory is projected to (the issue's target).
    static let projectedCount = 50_000
    /// Descriptors left unused below the computed maximum, for what the processes open meanwhile (a log, a DNS
    /// lookup, the key set's connection).
    static let spareDescriptors = 16
    /// WebSockets opened and closed before the RSS is read with none open.
    static let warmUp = 16
    /// Fewer bytes per idle WebSocket than this is no measurement: a relayed WebSocket holds two NIO channels and
    /// their pipelines.
    static let minimumPerConnection = 1024

    /// A count of idle WebSockets asked for: a number, or the most the descriptor limits allow (``maximum(_:)``).
    enum Count: Equatable {
        case exactly(Int)
        case maximum

        /// "1000", "max", or a comma-separated list of them ("1000,max").
        static func parse(_ text: String) -> [Count]? {
            let counts = text.split(separator: ",").map { part -> Count? in
                part == "max" ? .maximum : Int(part).flatMap { (1...1_000_000).contains($0) ? .exactly($0) : nil }
            }
            return counts.isEmpty || counts.contains(nil) ? nil : counts.compactMap { $0 }
        }
    }

    /// One count's measurement.
    struct Figure {
        var count: Int
        var before: Int
        var after: Int
        var connections: GatewayProcess.Connections
        var perConnection: Double { Double(after - before) / Double(count) }
    }

    // MARK: Descriptors

    /// The most WebSockets a process limited to `limit` descriptors, holding `held` now, takes with two descriptors
    /// each: the gateway (its client's and its upstream's) and this process (the load's client and the echo
    /// upstream's accepted side). Both accept through GatehouseHTTP's `DescriptorBudget`, which stops accepting while
    /// fewer than its reserve (limit / 8, 32 to 1,024) and headroom (limit / 8, 32 to 4,096) are free, with room for
    /// one read's 4 accepts; with the derivation.
    static func capacity(limit: Int, held: Int) -> (count: Int, derivation: String) {
        let reserve = min(max(limit / 8, 32), 1024)
        let headroom = min(max(limit / 8, 32), 4096)
        let usable = limit - reserve - headroom - 4 - held - spareDescriptors
        return (max(usable / 2, 0), "(\(limit) limit − \(reserve) reserve − \(headroom) headroom − 4 − \(held) held − \(spareDescriptors) spare) / 2 = \(max(usable / 2, 0))")
    }

    /// The most idle WebSockets the gateway and this process both have descriptors for, and how it was found.
    static func maximum(_ gateway: GatewayProcess) -> (count: Int, derivation: String) {
        let own = GatewayProcess(pid: getpid(), port: 0, upstreamPort: 0)
        let throughGateway = capacity(limit: gateway.descriptorLimit ?? 1024, held: gateway.descriptors)
        let throughLoad = capacity(limit: own.descriptorLimit ?? 1024, held: own.descriptors)
        let count = min(throughGateway.count, throughLoad.count)
        return (count, "gateway \(throughGateway.derivation); load and echo upstream \(throughLoad.derivation); the smaller: \(count)")
    }

    // MARK: Measuring

    /// The counts asked for, made numbers (`.maximum` from the descriptors the processes hold now), ascending and
    /// without repeats; printed with the maximum's derivation when one was asked for.
    private static func resolve(_ counts: [Count], gateway: GatewayProcess) -> [Int] {
        var resolved: [Int] = []
        for count in counts {
            switch count {
            case .exactly(let number): resolved.append(number)
            case .maximum:
                let (number, derivation) = maximum(gateway)
                print("most idle WebSockets the descriptor limits allow: \(derivation)")
                resolved.append(number)
            }
        }
        return Array(Set(resolved)).sorted()
    }

    /// The gateway's RSS with none open (after ``warmUp`` WebSockets opened and closed: what the first ones set up
    /// once), then with each of `counts` idle authenticated WebSockets open through it (`EchoLoad.whileIdle`). Throws
    /// — so that the benchmark fails — when the process read is not the gateway, when its sockets do not show every
    /// WebSocket open at a measurement, or when its RSS did not grow by at least ``minimumPerConnection`` for each.
    static func measure(gateway: GatewayProcess, authorization: String, counts: [Count]) async throws -> [Figure] {
        try gateway.verify()
        let url = "ws://127.0.0.1:\(gateway.port)/echo"
        _ = try await EchoLoad.whileIdle(url: url, authorization: authorization, counts: [warmUp], timeout: .seconds(30)) { _ in }
        try await Task.sleep(for: .seconds(1))
        print("gateway process \(gateway.pid): cmdline \(gateway.arguments.joined(separator: " ")); PPid \(gateway.status("PPid") ?? "?"); "
              + "\(gateway.descriptors) descriptors of \(gateway.descriptorLimit ?? 0); \(gateway.connections())")
        guard let before = gateway.residentBytes else { throw Wrk.Failure(description: "cannot read the gateway's VmRSS") }
        let idle = gateway.connections()
        let resolved = resolve(counts, gateway: gateway)
        print("gateway RSS \(before / 1024) KiB before (RssAnon \(gateway.status("RssAnon") ?? "?")); opening \(resolved.map(String.init).joined(separator: ", then "))")
        return try await EchoLoad.whileIdle(url: url, authorization: authorization, counts: resolved, timeout: .seconds(300)) { opened in
            let connections = gateway.connections()
            let after = gateway.residentBytes ?? 0
            try check(opened: opened, connections: connections, idle: idle)
            let figure = Figure(count: opened, before: before, after: after, connections: connections)
            print("  \(opened) open: gateway RSS \(after / 1024) KiB (RssAnon \(gateway.status("RssAnon") ?? "?")), \(connections); "
                  + "\(fixed(figure.perConnection / 1024, 2)) KiB each")
            guard after != before, figure.perConnection >= Double(minimumPerConnection) else {
                throw Wrk.Failure(description: "the gateway's RSS went from \(before / 1024) to \(after / 1024) KiB with \(opened) idle WebSockets open "
                                  + "(pid \(gateway.pid)): under \(minimumPerConnection) bytes each, less than two channels' objects — memory "
                                  + "the allocator already held, not a measurement")
            }
            return figure
        }
    }

    /// Throws unless the gateway holds `opened` WebSockets: that many clients connected more than when idle (`idle`),
    /// and at least that many connections to the upstream and two sockets for each (pooled HTTP connections to the
    /// upstream, counted too, may have closed since).
    static func check(opened: Int, connections: GatewayProcess.Connections, idle: GatewayProcess.Connections) throws {
        let clients = connections.clients - idle.clients
        guard clients == opened, connections.upstream >= opened, connections.sockets >= 2 * opened else {
            throw Wrk.Failure(description: "asked for \(opened) idle WebSockets, but the gateway holds \(clients) clients more than idle "
                              + "(idle: \(idle); now: \(connections)): the memory would not be theirs")
        }
    }

    /// The report: RSS before and with each count, KiB per WebSocket, and the projection to ``projectedCount`` from
    /// the largest count's bytes per WebSocket.
    static func report(_ figures: [Figure]) -> String {
        guard let largest = figures.last else { return "" }
        var lines = ["gateway memory: \(largest.before / 1024) KiB before any idle WebSocket"]
        for figure in figures {
            lines.append("memory per idle authenticated WebSocket through the gateway, \(figure.count) open: "
                         + "\(fixed(figure.perConnection / 1024, 2)) KiB (\(figure.after / 1024) KiB with them; client side and upstream side of the relay)")
        }
        let projected = Double(largest.before) + largest.perConnection * Double(projectedCount)
        lines.append("projection to \(projectedCount) idle WebSockets: \(largest.before / 1024) KiB + \(Int(largest.perConnection.rounded())) bytes × "
                     + "\(projectedCount) = \(fixed(projected / 1_048_576)) MiB (per-connection bytes from \(largest.count) open; "
                     + "\(2 * projectedCount) descriptors for the gateway's sockets alone)")
        return lines.joined(separator: "\n")
    }
}
