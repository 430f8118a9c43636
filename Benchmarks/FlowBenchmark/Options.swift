import Foundation

/// Command-line options of the benchmark.
struct Options: Sendable {
    var workers = 8
    var seconds = 10.0
    var maxFlows = 100_000
    /// Single operations with `wrk` (requests/s and server CPU per request, ÷ the unprotected endpoint) instead of flows.
    var operations = false
    /// Only this operation of the table (its row number, 1 = the baseline), for profiling.
    var only: Int?
    /// Rounds of every operation (with `--operations`).
    var rounds = 2
    var connections = 32
    /// Swift concurrency's jobs on NIO's event loops instead of Dispatch's pool (`gatehouse serve` keeps Dispatch's).
    var eventLoopExecutor = false
    /// Each connection's task on its event loop (`gatehouse serve --connections-on-event-loop`, default true).
    var connectionsOnEventLoop = true

    static let usage = """
        usage: FlowBenchmark [--workers N] [--seconds S] [--max-flows M]
               FlowBenchmark --operations [--seconds S] [--connections C] [--rounds R] [--only K]
               (either with --event-loop-executor, --connections-on-event-loop false)

        Runs complete MobileFirst flows (register, preauthorize 401, preauthorize 200, authorize 302, token 200)
        against an in-process Gatehouse server on 127.0.0.1 and prints flows per second.

          --workers N     concurrent flows (1...512, default 8)
          --seconds S     how long to run (0 < S <= 3600, default 10)
          --max-flows M   stop after M flow attempts at most (1...10000000, default 100000)
          --operations    instead: single operations with wrk (S seconds per run, C connections, R rounds):
                          the unprotected endpoint (the baseline), the protected balance with a valid token, the
                          unprotected endpoint with the protected request's Authorization header (ignored: HTTP's
                          own cost of carrying a token), a
                          pre-authorization round of an already-successful client, a client_credentials token,
                          introspection of a valid token, Hummingbird alone (one route, no middleware: the
                          framework's floor) and NIO alone (HTTP/1.1 answered on the event loop); requests/s and
                          server CPU µs per request, each ÷ baseline
          --rounds R      with --operations: rounds of every operation (1...50, default 2); the first three rows
                          back to back, in reverse order every other round, and each round's ratios between them
                          printed with their medians
          --only K        with --operations: only the K-th operation, once (for a profiler)
          --connections C wrk's connections (1...1000, default 32)
          --event-loop-executor  Swift concurrency's jobs on NIO's event loops (NIO's executor take-over) instead of
                          Dispatch's pool, which `gatehouse serve` uses (a measured comparison)
          --connections-on-event-loop true|false  each connection's task on its event loop (default true, as
                          `gatehouse serve`), or on Swift concurrency's shared threads
        """

    /// Parses `arguments` (without the program name); exits with the usage on an error.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("error: \(message)\n\n\(usage)\n".utf8))
            exit(2)
        }
        func value(_ name: String) -> String {
            index += 1
            guard index < arguments.count else { fail("\(name) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--workers", "-w":
                guard let n = Int(value(argument)), (1...512).contains(n) else { fail("--workers must be 1...512") }
                options.workers = n
            case "--seconds", "-s":
                guard let s = Double(value(argument)), s > 0, s <= 3600 else { fail("--seconds must be in (0, 3600]") }
                options.seconds = s
            case "--max-flows":
                guard let m = Int(value(argument)), (1...10_000_000).contains(m) else { fail("--max-flows must be 1...10000000") }
                options.maxFlows = m
            case "--operations":
                options.operations = true
            case "--rounds":
                guard let r = Int(value(argument)), (1...50).contains(r) else { fail("--rounds must be 1...50") }
                options.rounds = r
            case "--only":
                guard let k = Int(value(argument)), (1...8).contains(k) else { fail("--only must be 1...8") }
                options.only = k
            case "--connections-on-event-loop":
                guard let on = Bool(value(argument)) else { fail("--connections-on-event-loop takes true or false") }
                options.connectionsOnEventLoop = on
            case "--connections":
                guard let c = Int(value(argument)), (1...1000).contains(c) else { fail("--connections must be 1...1000") }
                options.connections = c
            case "--event-loop-executor":
                options.eventLoopExecutor = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                fail("unknown argument \(argument)")
            }
            index += 1
        }
        return options
    }
}
