import Foundation
import Testing

/// Hostile input round 2, finding 10: `gatehouse serve` answered an HTTP/1.0 request as `HTTP/1.1` and never closed
/// the connection, and did not acknowledge a 1.0 client's `Connection: keep-alive`: ApacheBench (`ab`, HTTP/1.0)
/// hung on its first request. RFC 9112 §9.3.
@Suite(.timeLimit(.minutes(3))) struct HTTP10Tests {
    static func port(_ server: TestServer) -> Int { URLComponents(string: server.baseURL)?.port ?? 0 }

    @Test func anHTTP10RequestIsAnsweredIn10AndTheConnectionClosed() async throws {
        try await TestServer.run { server in
            let connection = try RawHTTPConnection(port: Self.port(server), timeout: .seconds(10))
            await connection.send("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            let (bytes, closed) = await connection.readToEnd()
            #expect(closed, "the connection stayed open after the answer")
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.0 200"), "\(text)")
            #expect(RawHTTPResponse(bytes)?.header("Connection") == "close")
        }
    }

    @Test func anHTTP10KeepAliveIsAcknowledgedAndTheConnectionServesAgain() async throws {
        try await TestServer.run { server in
            let connection = try RawHTTPConnection(port: Self.port(server), timeout: .seconds(10))
            for _ in 0..<2 {
                await connection.send("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
                let answer = await connection.readResponse()
                #expect(answer?.status == 200)
                #expect(answer?.header("Connection") == "keep-alive")
            }
            // HTTP/1.1 on the same server is unchanged: no Connection field, kept open.
            let eleven = try RawHTTPConnection(port: Self.port(server), timeout: .seconds(10))
            await eleven.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let answer = await eleven.readResponse()
            #expect(answer?.status == 200 && answer?.header("Connection") == nil)
        }
    }

    @Test func apacheBenchCompletesWithAndWithoutKeepAlive() async throws {
        try await TestServer.run { server in
            try await ApacheBench.expectCompletes(server.baseURL + "/health", requests: 2000, concurrency: 8, seconds: 10)
        }
    }
}
