import Foundation
import GatehouseGateway
import Testing

/// Hostile input round 2, finding 9: a second request head on a kept gateway connection could be dribbled far past
/// `--header-read-timeout` (each byte reset the idle timer). A later request's head now has the header-read timeout
/// from its first byte, as the first request's has.
@Suite(.timeLimit(.minutes(3))) struct DribbledHeadTests {
    @Test func aDribbledSecondHeadIsAnswered408WithinTheHeaderTimeout() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/", upstream: upstream)], headerReadTimeout: 1, idleTimeout: 30)
        }) { fixture in
            let connection = try RawHTTPConnection(port: fixture.port, timeout: .seconds(15))
            await connection.send("GET /first HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(await connection.readResponse()?.status == 200)
            let start = ContinuousClock.now
            await connection.send("GET /second HTTP/1.1\r\n")
            // A byte every 300 ms, for up to 6 s: the gateway must stop it after about 1 s.
            var refused = false
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(300))
                if !(await connection.send("X")) { refused = true; break }
                if ContinuousClock.now - start > .seconds(6) { break }
            }
            let (bytes, closed) = await connection.readToEnd()
            let elapsed = ContinuousClock.now - start
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.1 408") || refused, "\(text)")
            #expect(elapsed < .seconds(8), "\(elapsed)")
        }
    }
}
