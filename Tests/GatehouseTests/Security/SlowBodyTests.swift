import Foundation
import Testing

/// Hostile input round 3, finding 12 (issue 54): `gatehouse serve` let a body sent one byte per 1.2 s keep a
/// connection 30 s with `--idle-timeout 2` — the idle timer restarts at every byte, and nothing bounded the body as
/// a whole. Now a request's body must all arrive within the header-read timeout of its head, on every request of a
/// connection (bodies are 64 KiB at most).
@Suite(.timeLimit(.minutes(3))) struct SlowBodyTests {
    /// Dribbles a body one byte per 1.2 s (at most `bytes`), after `prelude`; the seconds until the server closed,
    /// `nil` when it had not by the last byte.
    static func dribble(port: Int, prelude: [UInt8], bytes: Int) async throws -> Double? {
        let connection = try RawHTTPConnection(port: port, timeout: .milliseconds(1_200))
        let start = Date()
        var headers = "POST /mfp/api/az/v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        headers += "Content-Length: \(bytes)\r\n\r\n"
        guard await connection.send(prelude + Array(headers.utf8)) else { return 0 }
        var answer: [UInt8] = []
        for _ in 0..<bytes {
            guard await connection.send([UInt8(ascii: "a")]) else { return Date().timeIntervalSince(start) }
            let (read, closed) = await connection.readToEnd()   // waits 1.2 s unless the server closes
            answer += read
            if closed { return Date().timeIntervalSince(start) }
        }
        return nil
    }

    @Test func aDribbledBodyIsCutAtTheHeaderReadTimeout() async throws {
        try await TestServer.run(headerReadTimeout: .seconds(3)) { server in
            let port = URLComponents(string: server.baseURL)?.port ?? 0
            // The first request of a connection, and one after a request answered on it (keep-alive).
            let health = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            for prelude in [[], health] {
                let closedAfter = try await Self.dribble(port: port, prelude: prelude, bytes: 12)
                let seconds = try #require(closedAfter, "the connection was still open after 12 bytes over 14 s")
                #expect(seconds >= 2.5 && seconds < 7, "closed after \(seconds) s")
            }
            // A body sent at once is answered as before.
            let body = Array("grant_type=client_credentials&scope=x".utf8)
            let answered = try await RawHTTPConnection.exchange(port: port, target: Array("/mfp/api/az/v1/token".utf8), method: "POST",
                                                                headers: ["Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.count)"],
                                                                body: body)
            #expect(answered.status == 400 || answered.status == 401)
        }
    }
}
