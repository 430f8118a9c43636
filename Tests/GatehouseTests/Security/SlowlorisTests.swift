import Foundation
import GatehouseGateway
import Testing

/// Slowloris (request heads sent a line at a time, never finished) against the gateway, by a tool we did not write:
/// Debian's `slowhttptest`. Each slow connection is closed by the gateway's first-head timeout
/// (`headerReadTimeout`), from the connection's opening, however often a line arrives, and the gateway answers
/// `slowhttptest`'s probe requests meanwhile.
@Suite(.timeLimit(.minutes(3))) struct SlowlorisTests {
    @Test func slowHeadsAreClosedByTheHeadTimeoutAndTheServiceStaysAvailable() async throws {
        let tool = "/usr/bin/slowhttptest"
        try #require(FileManager.default.isExecutableFile(atPath: tool), "slowhttptest (Debian) is installed by scripts/test")
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/", upstream: upstream)], headerReadTimeout: 2, idleTimeout: 30)
        }) { fixture in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("slowloris-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let prefix = directory.appendingPathComponent("stats").path
            // 120 connections at 60 a second, a header line every second (up to 24 bytes), for 10 s; a probe
            // request every second that must be answered within 3 s.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = ["-H", "-c", "120", "-r", "60", "-i", "1", "-x", "24", "-l", "10", "-p", "3", "-t", "GET",
                                 "-u", fixture.base + "/slow", "-g", "-o", prefix]
            let log = directory.appendingPathComponent("log").path
            FileManager.default.createFile(atPath: log, contents: nil)
            let logHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = logHandle
            process.standardError = logHandle
            try process.run()
            let deadline = ContinuousClock.now + .seconds(60)
            while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
            if process.isRunning { process.terminate() }
            #expect(process.terminationReason == .exit)
            try? logHandle.close()
            let csv = try String(contentsOfFile: prefix + ".csv", encoding: .utf8)
                + "\n" + (try String(contentsOfFile: log, encoding: .utf8)).suffix(1500)
            // Seconds,Closed,Pending,Connected,Service Available
            let rows = csv.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                .filter { $0.count >= 5 }
            try #require(rows.count >= 3, "\(csv)")
            // The last column is 0 when a probe went unanswered (else slowhttptest writes the connection count).
            #expect(rows.allSatisfy { $0[4] != "0" }, "the service was unavailable at some second:\n\(csv)")
            // Held while the head timeout runs (2 s from each opening): none closed in the first second…
            #expect(rows.filter { (Int($0[0]) ?? 99) <= 1 }.allSatisfy { $0[1] == "0" }, "\(csv)")
            // …then every one closed by the gateway, which ends the test early (it would run 10 s); its last sample may
            // be taken just before the last few close.
            #expect((Int(rows.last?[1] ?? "") ?? 0) >= 100, "\(csv)")
            #expect(csv.contains("No open connections left"), "\(csv)")
            #expect(rows.count <= 8, "slow connections outlived the head timeout:\n\(csv)")
        }
    }
}
