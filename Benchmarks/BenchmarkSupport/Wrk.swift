import Foundation

/// Runs `wrk` (Debian's package `wrk`) against a URL on loopback and reads its figures.
public enum Wrk {
    /// What one run measured.
    public struct Result: Sendable {
        public var requestsPerSecond: Double
        public var non2xx: Int
    }

    /// A run that went wrong, or any other reason a benchmark cannot go on.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// One run of `connections` connections for `seconds` on one thread, with `Authorization: authorization`.
    public static func run(url: String, connections: Int, seconds: Double, authorization: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["wrk", "-t", "1", "-c", "\(connections)", "-d", "\(max(1, Int(seconds.rounded())))s"]
        if let authorization { arguments += ["-H", "Authorization: \(authorization)"] }
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
        return Result(requestsPerSecond: rate, non2xx: non2xx)
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

/// The resident memory of process `pid` in bytes (Linux `/proc`), if readable.
public func residentMemory(of pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1])
    else { return nil }
    return kilobytes * 1024
}
