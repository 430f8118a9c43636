import BenchmarkSupport
import Foundation

/// Single operations under load with `wrk` against the in-process server: requests/s and the server's CPU per
/// request (this process's own kernel counters: while wrk runs, the benchmark itself is idle, so what it spends is
/// the server's), each as a ratio to the unprotected endpoint measured in the same run. Each operation is warmed up for a
/// second, then runs `rounds` times, alternating with the others, so that drift in the machine's load affects all alike.
struct OperationLoad {
    let baseURL: String
    /// A Hummingbird server of one route and no middleware in this process (``withBareHummingbird``): the
    /// framework's own cost per request, for telling it from ours.
    let floorURL: String
    /// NIO's HTTP/1.1 server pipeline answering on the event loop (``withBareNIO``): what HTTP costs without
    /// Hummingbird's tasks, router and middleware.
    let nioURL: String
    /// A token of a completed flow, and the clients that completed one (already successful for `accessRestricted`).
    let token: String
    let clientIDs: [String]
    let seconds: Double
    let connections: Int
    /// Only this row (1-based), once, for a profiler; `nil` for the whole table.
    var only: Int?
    /// Rounds of every operation (one with `only`).
    var requestedRounds = 2
    var rounds: Int { only == nil ? requestedRounds : 1 }

    struct Operation {
        let name: String
        let path: String
        /// Another server than Gatehouse (the framework floor), if not `baseURL`.
        var base: String?
        var authorization: String?
        var load: Wrk.Load?
    }

    var operations: [Operation] {
        let service = "Basic " + Data("\(benchmarkServiceID):\(benchmarkServiceSecret)".utf8).base64EncodedString()
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        return [
            Operation(name: "unprotected endpoint (baseline)", path: "/mfp/api/adapters/ResourceAdapter/unprotected"),
            Operation(name: "protected balance, valid token", path: "/mfp/api/adapters/ResourceAdapter/balance", authorization: "Bearer \(token)"),
            // The protected request's header without its check: what carrying a 600-byte token costs HTTP itself.
            Operation(name: "unprotected, with the token's header", path: "/mfp/api/adapters/ResourceAdapter/unprotected",
                      authorization: "Bearer \(token)"),
            Operation(name: "pre-authorization round, successful client", path: "/mfp/api/preauth/v1/preauthorize", load: Wrk.Load(
                method: "POST", headers: [("Content-Type", "application/json")],
                bodies: clientIDs.map { #"{"client_id":"\#($0)","scope":"accessRestricted"}"# })),
            Operation(name: "client_credentials token", path: "/mfp/api/az/v1/token", authorization: service, load: Wrk.Load(
                method: "POST", headers: form.map { ($0.key, $0.value) },
                bodies: ["grant_type=client_credentials&scope=authorization.introspect"])),
            Operation(name: "introspection of a valid token", path: "/mfp/api/az/v1/introspection", authorization: service, load: Wrk.Load(
                method: "POST", headers: form.map { ($0.key, $0.value) }, bodies: ["token=\(token)"])),
            Operation(name: "Hummingbird alone, one route (floor)", path: "/hello", base: floorURL),
            Operation(name: "NIO alone, answered on the event loop", path: "/hello", base: nioURL),
        ]
    }

    /// One request of `operation` with curl, its answer as text (to show why a run failed).
    func sample(_ operation: Operation) -> String {
        var arguments = ["curl", "-s", "-i", "--max-time", "10", "-X", operation.load?.method ?? "GET"]
        if let authorization = operation.authorization { arguments += ["-H", "Authorization: \(authorization)"] }
        for (name, value) in operation.load?.headers ?? [] { arguments += ["-H", "\(name): \(value)"] }
        if let body = operation.load?.bodies.first { arguments += ["--data-raw", body] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments + [(operation.base ?? baseURL) + operation.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "(curl did not run)" }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(output.prefix(600))
    }

    struct Figures {
        var requests = 0
        var seconds = 0.0
        var cpu = 0.0
        var rate: Double { seconds > 0 ? Double(requests) / seconds : 0 }
        var cpuMicroseconds: Double { requests > 0 ? cpu / Double(requests) * 1e6 : 0 }
    }

    /// Runs every operation `rounds` times and prints the table; returns the exit status.
    func report() throws -> Int32 {
        print("wrk: 1 thread, \(connections) connections, \(Int(seconds.rounded())) s per run, \(rounds) rounds; CPU from this process's counters")
        fflush(nil)   // seen at once also through a pipe (a profiler waits for this line)
        let pid = getpid()
        var figures = [Figures](repeating: Figures(), count: operations.count)
        /// Each round's requests per second of the first three rows (the baseline, the protected balance, the
        /// baseline with the protected request's header).
        var firstRates: [[Double]] = []
        for round in 1...rounds {
            // The first three rows back to back, in reverse order every other round: the machine's drift falls on all.
            var order = Array(operations.indices)
            if round % 2 == 0 { order.swapAt(0, 2) }
            var rates = [Double](repeating: 0, count: operations.count)
            for index in order where only == nil || only == index + 1 {
                let operation = operations[index]
                if round == 1 {   // warm-up, not counted: caches filled (a secret's bcrypt, a token's signature check)
                    _ = try Wrk.run(url: (operation.base ?? baseURL) + operation.path, connections: connections, seconds: 1,
                                    authorization: operation.authorization, load: operation.load)
                }
                let cpuBefore = ProcessCPU.seconds(of: pid)
                let result = try Wrk.run(url: (operation.base ?? baseURL) + operation.path, connections: connections, seconds: seconds,
                                         authorization: operation.authorization, load: operation.load)
                let cpu = ProcessCPU.seconds(of: pid) - cpuBefore
                guard result.non2xx == 0 else {
                    print("round \(round), \(operation.name): \(result.non2xx) non-2xx answers: the figures would be wrong")
                    print("one answer (curl):\n\(sample(operation))")
                    return 1
                }
                rates[index] = result.requestsPerSecond
                figures[index].requests += result.requests
                figures[index].seconds += Double(result.requests) / max(result.requestsPerSecond, 1)
                figures[index].cpu += cpu
            }
            firstRates.append(Array(rates.prefix(3)))
            print("round \(round) done")
            fflush(nil)
        }
        if let only {
            let figure = figures[only - 1]
            print("\(operations[only - 1].name): \(fixed(figure.rate, 0)) req/s, \(fixed(figure.cpuMicroseconds, 1)) µs CPU per request")
            return 0
        }
        let baseline = figures[0]
        func column(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        print("")
        print(column("operation", 46) + column("req/s", 10) + column("÷ baseline", 12) + column("CPU µs/req", 12) + "÷ baseline")
        for (operation, figure) in zip(operations, figures) {
            print(column(operation.name, 46) + column(fixed(figure.rate, 0), 10) + column(fixed(figure.rate / baseline.rate, 3), 12)
                  + column(fixed(figure.cpuMicroseconds, 1), 12) + fixed(figure.cpuMicroseconds / baseline.cpuMicroseconds, 2))
        }
        /// Row `a` ÷ row `b` pooled, then each round's and their median.
        func ratio(_ a: Int, _ b: Int) -> String {
            "\(fixed(figures[a].rate / figures[b].rate, 3)) (\(perRoundRatios(firstRates.map { $0[a] }, firstRates.map { $0[b] })))"
        }
        print("\nprotected / unprotected: \(ratio(1, 0))")
        print("unprotected with the token's header / unprotected: \(ratio(2, 0)): HTTP's own cost of the header, "
              + "\(fixed(figures[2].cpuMicroseconds - baseline.cpuMicroseconds, 1)) µs CPU per request")
        print("protected / unprotected with the token's header: \(ratio(1, 2)): the check's own cost")
        return 0
    }
}
