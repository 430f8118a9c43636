import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 54's descriptor drill for the gateway: `gatehouse gateway` (the echo demo, whose WebSockets cost three
/// descriptors each: the client's, the upstream's and the echo's own) under `ulimit -n 256` with 400 WebSockets asked
/// (most cannot be accepted or relayed): while they are held it keeps descriptors free (``DescriptorBudget``: the
/// process used to take its last one, and libdispatch then aborted it); once they close it answers `/health` and
/// relays a WebSocket again within 15 s, still the same process.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GatewayWebSocketDescriptorDrillTests {
    @Test func theGatewayServesAgainAfterItsDescriptorsRanOutOnWebSockets() async throws {
        let folder = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/output.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n 256; exec '\(GatehouseProcess.executable.path)' gateway --port 0 --log-level warning"]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var port = 0
        for _ in 0..<600 where port == 0 {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listens on http://127.0.0.1:") { port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0 }
            if port == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(port > 0, "no banner: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
        let upgrade = "GET /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Basic " + Data("joe:welcome".utf8).base64EncodedString() + "\r\n\r\n"

        var connections: [RawHTTPConnection] = []
        for _ in 0..<400 {
            guard let connection = try? RawHTTPConnection(port: port, timeout: .seconds(5)) else { break }
            _ = await connection.send(upgrade)
            connections.append(connection)
        }
        // While they are held: the process keeps descriptors free (libdispatch aborts the process when it cannot open
        // /proc/<tid>/stat, and the logs, DNS and the store need descriptors too).
        let pid = process.processIdentifier
        var mostOpen = 0
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(200))
            mostOpen = max(mostOpen, (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0)
        }
        print("gateway WebSocket drill: \(connections.count) connections asked a WebSocket; at most \(mostOpen) of 256 descriptors open")
        #expect(mostOpen > 100, "the drill did not load the gateway (\(mostOpen) descriptors open)")
        #expect(mostOpen <= 256 - 8, "the gateway let its connections take its last descriptors: \(mostOpen) of 256 open")
        connections.removeAll()

        let start = ContinuousClock.now
        var health = 0
        while health != 200, ContinuousClock.now - start < .seconds(15) {
            health = (try? await RawHTTPConnection.exchange(port: port, target: "/health"))?.status ?? 0
            if health != 200 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(health == 200, "no /health 200 within 15 s after the connections closed")
        var relayed = false
        while !relayed, ContinuousClock.now - start < .seconds(15) {
            if let connection = try? RawHTTPConnection(port: port, timeout: .seconds(2)) {
                _ = await connection.send(upgrade)
                relayed = await connection.readResponse(toHEAD: true)?.status == 101
            }
            if !relayed { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(relayed, "no WebSocket relayed within 15 s after the connections closed")
        #expect(process.isRunning, "the gateway died: \(process.isRunning ? "" : "\(process.terminationReason == .uncaughtSignal ? "signal" : "exit") \(process.terminationStatus)")")
        print("gateway WebSocket drill: serving again after \(ContinuousClock.now - start)")
    }
}
