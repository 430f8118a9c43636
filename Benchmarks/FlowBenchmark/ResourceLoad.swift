import Foundation

/// The protected-resource benchmark: requests per second of the protected balance endpoint with a valid token
/// divided by requests per second of the unprotected endpoint beside it, on the same server, measured with `wrk`
/// (Debian's package) on loopback. The two endpoints are run alternately, `rounds` times each, so that drift in
/// the machine's load affects both alike.
struct ResourceLoad {
    let baseURL: String
    let token: String
    let seconds: Double
    let connections: Int
    let rounds = 2

    /// One `wrk` run; returns its requests per second and its non-2xx count.
    func run(path: String, authorization: String?) throws -> (rate: Double, non2xx: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["wrk", "-t", "1", "-c", "\(connections)", "-d", "\(max(1, Int(seconds.rounded())))s", "--latency"]
        if let authorization { arguments += ["-H", "Authorization: \(authorization)"] }
        arguments.append(baseURL + path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
              let rate = Double(line.split(separator: " ").last ?? "")
        else { throw FlowError(step: .token, detail: "wrk failed (install it: apt-get install wrk): \(output)") }
        let non2xx = output.split(separator: "\n").first(where: { $0.contains("Non-2xx") })
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        return (rate, non2xx)
    }

    /// Runs both endpoints alternately and prints the figures and the ratio.
    func report() throws -> Int32 {
        let protected = "/mfp/api/adapters/ResourceAdapter/balance"
        let unprotected = "/mfp/api/adapters/ResourceAdapter/unprotected"
        print("wrk: 1 thread, \(connections) connections, \(Int(seconds.rounded())) s per run, \(rounds) rounds per endpoint")
        var protectedRates: [Double] = []
        var unprotectedRates: [Double] = []
        for round in 1...rounds {
            let open = try run(path: unprotected, authorization: nil)
            let closed = try run(path: protected, authorization: "Bearer \(token)")
            guard open.non2xx == 0, closed.non2xx == 0 else {
                print("round \(round): non-2xx answers (unprotected \(open.non2xx), protected \(closed.non2xx)): the figures would be wrong")
                return 1
            }
            print("round \(round): unprotected \(fixed(open.rate)) req/s, protected \(fixed(closed.rate)) req/s")
            unprotectedRates.append(open.rate)
            protectedRates.append(closed.rate)
        }
        let open = unprotectedRates.reduce(0, +) / Double(rounds)
        let closed = protectedRates.reduce(0, +) / Double(rounds)
        print("""

            unprotected req/s:  \(fixed(open))
            protected req/s:    \(fixed(closed)) (Bearer token checked: signature cached per token, expiry, revocation, scope)
            protected / unprotected: \(fixed(closed / open, 3))
            """)
        return 0
    }
}
