import BenchmarkSupport
import Foundation

/// The protected-resource benchmark: requests per second of the protected balance endpoint with a valid token
/// divided by requests per second of the unprotected endpoint beside it, on the same server, measured with `wrk`
/// on loopback. The two endpoints are run alternately, `rounds` times each, so that drift in the machine's load
/// affects both alike.
struct ResourceLoad {
    let baseURL: String
    let token: String
    let seconds: Double
    let connections: Int
    let rounds = 2

    /// Runs both endpoints alternately and prints the figures and the ratio.
    func report() throws -> Int32 {
        let protected = baseURL + "/mfp/api/adapters/ResourceAdapter/balance"
        let unprotected = baseURL + "/mfp/api/adapters/ResourceAdapter/unprotected"
        print("wrk: 1 thread, \(connections) connections, \(Int(seconds.rounded())) s per run, \(rounds) rounds per endpoint")
        var protectedRates: [Double] = []
        var unprotectedRates: [Double] = []
        for round in 1...rounds {
            let open = try Wrk.run(url: unprotected, connections: connections, seconds: seconds)
            let closed = try Wrk.run(url: protected, connections: connections, seconds: seconds, authorization: "Bearer \(token)")
            guard open.non2xx == 0, closed.non2xx == 0 else {
                print("round \(round): non-2xx answers (unprotected \(open.non2xx), protected \(closed.non2xx)): the figures would be wrong")
                return 1
            }
            print("round \(round): unprotected \(fixed(open.requestsPerSecond)) req/s, protected \(fixed(closed.requestsPerSecond)) req/s")
            unprotectedRates.append(open.requestsPerSecond)
            protectedRates.append(closed.requestsPerSecond)
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
