import Foundation
import Testing

/// `gatehouse serve` against slowloris: a new connection that does not send its first request head in time,
/// even one byte now and then, gets `408` and is closed.
@Suite(.timeLimit(.minutes(3))) struct ServerTimeoutTests {
    @Test func aStalledOrDribbledHeadIsCutOff() async throws {
        try await TestServer.run(headerReadTimeout: .milliseconds(1500)) { server in
            // Half a request line, then nothing.
            let stalled = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
            await stalled.send("GET /hea")
            let start = ContinuousClock.now
            let (bytes, closed) = await stalled.readToEnd()
            #expect(closed)
            #expect(ContinuousClock.now - start < .seconds(8))
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 408"))

            // One byte every 300 ms: still cut off, though bytes keep coming.
            let dribbled = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
            let dribbleStart = ContinuousClock.now
            var open = true
            for byte in "GET /health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".utf8 where open {
                open = await dribbled.send([byte])
                try await Task.sleep(for: .milliseconds(300))
                if ContinuousClock.now - dribbleStart > .seconds(9) { break }
            }
            #expect(!open, "the server kept a dribbling connection open")
            // A normal request is unaffected.
            #expect(try await HTTP.send(.GET, server.baseURL + "/health").status == 200)
        }
    }
}
