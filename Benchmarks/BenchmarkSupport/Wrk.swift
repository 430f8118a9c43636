import Foundation

/// Runs `wrk` (Debian's package `wrk`) against a URL on loopback and reads its figures.
public enum Wrk {
    /// What one run measured.
    public struct Result: Sendable {
        public var requestsPerSecond: Double
        public var non2xx: Int
        /// Requests completed in the run.
        public var requests: Int
    }

    /// A request other than a plain `GET`: wrk sends it through a Lua script, cycling through `bodies`.
    public struct Load: Sendable {
        public var method: String
        public var headers: [(String, String)]
        /// One per request in turn (several clients' ids, say); empty for none.
        public var bodies: [String]

        public init(method: String = "GET", headers: [(String, String)] = [], bodies: [String] = []) {
            self.method = method
            self.headers = headers
            self.bodies = bodies
        }

        /// The Lua script wrk runs for this load.
        var script: String {
            // Lua's decimal escape takes up to three digits: always three, so that a digit after it stays a digit.
            func quoted(_ text: String) -> String {
                "\"" + text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? String($0) : String(format: "\\%03d", $0.value) }.joined() + "\""
            }
            var lines = ["wrk.method = \(quoted(method))"]
            for (name, value) in headers { lines.append("wrk.headers[\(quoted(name))] = \(quoted(value))") }
            if !bodies.isEmpty {
                lines.append("local bodies = {" + bodies.map(quoted).joined(separator: ",") + "}")
                lines.append("local i = 0")
                lines.append("request = function() i = i % #bodies + 1; return wrk.format(nil, nil, nil, bodies[i]) end")
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// A run that went wrong, or any other reason a benchmark cannot go on.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// One run of `connections` connections for `seconds` on one thread, with `Authorization: authorization`.
    public static func run(url: String, connections: Int, seconds: Double, authorization: String? = nil, load: Load? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["wrk", "-t", "1", "-c", "\(connections)", "-d", "\(max(1, Int(seconds.rounded())))s"]
        if let authorization { arguments += ["-H", "Authorization: \(authorization)"] }
        var scriptPath: String?
        if let load {
            let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("wrk-\(UUID().uuidString).lua")
            try load.script.write(toFile: path, atomically: true, encoding: .utf8)
            arguments += ["-s", path]
            scriptPath = path
        }
        defer { if let scriptPath { try? FileManager.default.removeItem(atPath: scriptPath) } }
        arguments.append(url)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = output.split(separator: "\n")
        guard process.terminationStatus == 0,
              let line = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
              let rate = Double(line.split(separator: " ").last ?? "")
        else { throw Failure(description: "wrk failed (install it with apt-get install wrk): \(output)") }
        let non2xx = lines.first(where: { $0.contains("Non-2xx") }).flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        // "  123456 requests in 10.00s, 12.34MB read"
        let requests = lines.first(where: { $0.contains(" requests in ") })
            .flatMap { Int($0.split(separator: " ").first ?? "") } ?? Int(rate * seconds)
        return Result(requestsPerSecond: rate, non2xx: non2xx, requests: requests)
    }
}

extension Duration {
    /// The duration in milliseconds.
    public var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// The duration in seconds.
    public var seconds: Double { milliseconds / 1000 }
}

/// `value` with `decimals` decimals.
public func fixed(_ value: Double, _ decimals: Int = 1) -> String { String(format: "%.\(decimals)f", value) }

/// Each round's ratio of `a` to `b` (rates measured back to back) and their median: "per round 0.950, 1.010; median
/// 0.980" — the median shrugs off a round the shared machine disturbed.
public func perRoundRatios(_ a: [Double], _ b: [Double]) -> String {
    let ratios = zip(a, b).map { $1 > 0 ? $0 / $1 : 0 }
    let sorted = ratios.sorted()
    guard !sorted.isEmpty else { return "no rounds" }
    let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    return "per round " + ratios.map { fixed($0, 3) }.joined(separator: ", ") + "; median \(fixed(median, 3))"
}

/// The resident memory of process `pid` in bytes (Linux `/proc`), if readable.
public func residentMemory(of pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1])
    else { return nil }
    return kilobytes * 1024
}
