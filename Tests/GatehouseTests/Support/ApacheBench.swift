import Foundation
import Testing

/// ApacheBench (`ab`, Debian's apache2-utils: HTTP/1.0, `-k` for keep-alive), a client this project did not write.
enum ApacheBench {
    /// Whether `ab` is installed; records an issue when it is not (scripts/test installs it).
    static var isInstalled: Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ab") else {
            Issue.record("ab is not installed (apt-get install apache2-utils; scripts/test installs it)")
            return false
        }
        return true
    }

    /// Runs `ab` against `url` without and then with keep-alive (`requests` each, `concurrency` at once, `seconds` per
    /// socket wait) and expects every request completed and none failed. `ab` runs off the Swift concurrency pool:
    /// waiting for it there would stall the servers this process runs.
    static func expectCompletes(_ url: String, requests: Int, concurrency: Int, seconds: Int) async throws {
        guard isInstalled else { return }
        for keepAlive in [false, true] {
            let (status, text) = try await runOffThePool("/usr/bin/timeout", ["60", "/usr/bin/ab", "-q", "-s", String(seconds), "-n", String(requests),
                                                                              "-c", String(concurrency)] + (keepAlive ? ["-k"] : []) + [url])
            #expect(status == 0, "ab\(keepAlive ? " -k" : ""): \(text)")
            #expect(text.contains("Complete requests:      \(requests)"), "\(text)")
            #expect(text.contains("Failed requests:        0"), "\(text)")
        }
    }
}
