import Foundation
import GatehouseServer
import Testing

/// `serve`'s front (``ServeFront``: the gateway's listener, NIO's HTTP/1 codec, the router on one task per request on
/// the connection's event loop): a MobileFirst client's whole flow, the router's answer and memory's alike, pipelined
/// requests in order (answers from memory among them), HTTP/1.0, `Connection: close`, a body over the bound, requests
/// on the shared threads when asked; ApacheBench and curl (HTTP/2 and HTTP/1.1 over TLS) complete.
@Suite(.timeLimit(.minutes(3))) struct ServeFrontTests {
    /// A client's flow — registration, a login round, a token, its introspection — and what each step answered: the
    /// status and the names of the answer's fields.
    static func flow() async throws -> [String] {
        try await TestServer.run(policy: IntrospectionTests.policy) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let login = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo"]])
            let token = try await client.obtainToken(scope: "UserLogin").access_token
            let connection = try RawHTTPConnection(port: server.port)
            var seen = ["login \(login.status)"]
            for _ in 0..<2 {  // the router's answer, then (the client known) memory's
                await connection.send(LoopAnswersTests.introspection(token))
                let answer = try #require(await connection.readResponse())
                seen.append("introspection \(answer.status) " + answer.headers.map(\.name).joined(separator: ","))
            }
            let health = try #require(await RawHTTPConnection.exchange(port: server.port, target: "/health"))
            seen.append("health \(health.status) " + health.headers.map(\.name).joined(separator: ","))
            return seen
        }
    }

    @Test func aMobileFirstClientsFlowIsAnsweredAndMemorysAnswerHasTheRoutersFields() async throws {
        let seen = try await Self.flow()
        #expect(seen.count == 4)
        #expect(seen.first == "login 200")
        let introspections = seen.dropFirst().prefix(2).map { Set($0.lowercased().split(separator: " ").last?.split(separator: ",") ?? []) }
        #expect(introspections.count == 2 && introspections.first == introspections.last, "the answer from memory differs from the router's: \(seen)")
        for line in seen.dropFirst() {
            for field in ["content-type", "content-length", "date", "server"] {
                #expect(line.lowercased().contains(field), "\(field) missing from \(line)")
            }
        }
        #expect(seen.last?.hasPrefix("health 200") == true)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await TestServer.run() { server in
            let connection = try RawHTTPConnection(port: server.port)
            let targets = ["/health", "/openapi.json", "/no-such-route", "/health"]
            await connection.send(targets.map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined())
            var statuses: [Int] = []
            for _ in targets { statuses.append(try #require(await connection.readResponse()).status) }
            #expect(statuses == [200, 200, 404, 200])
        }
    }

    @Test func http10IsAnsweredIn10AndClosedAndConnectionCloseIsHonoured() async throws {
        try await TestServer.run() { server in
            let old = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
            await old.send("GET /health HTTP/1.0\r\n\r\n")
            let (bytes, closed) = await old.readToEnd()
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.0 200"))
            #expect(closed)
            let closing = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
            await closing.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let (answer, ended) = await closing.readToEnd()
            #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            #expect(ended)
        }
    }

    @Test func aBodyOverTheBoundIsRefusedWithJSON() async throws {
        try await TestServer.run() { server in
            let connection = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
            let length = 3 * 1024 * 1024
            await connection.send("POST /mfp/api/az/v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                  + "Content-Length: \(length)\r\n\r\n")
            _ = await connection.send([UInt8](repeating: 0x61, count: 2 * 1024 * 1024 + 1))
            let answer = try #require(await connection.readResponse())
            #expect(answer.status == 413)
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            #expect(answer.text.contains("PAYLOAD_TOO_LARGE"))
        }
    }

    /// ApacheBench (HTTP/1.0 without `-k`, keep-alive with it): every request answered, none failed.
    @Test func apacheBenchCompletesWithAndWithoutKeepAlive() async throws {
        try await TestServer.run() { server in
            try await ApacheBench.expectCompletes(server.baseURL + "/health", requests: 2000, concurrency: 8, seconds: 10)
        }
    }

    /// Over TLS (the command itself): curl gets HTTP/2 when it asks (ALPN `h2`, each stream its own
    /// router handler) and HTTP/1.1 otherwise, and ApacheBench completes over TLS with and without keep-alive.
    @Test func overTLSCurlGetsHTTP2OrHTTP11AndApacheBenchCompletes() async throws {
        let certificates = try await TestCertificates.make(commonName: "gatehouse-own-front")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serve([])
        defer { server.stop() }
        let h2 = try await curl(["--cacert", certificates.caPath, "--http2", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(h2.output == "2 200")
        let h1 = try await curl(["--cacert", certificates.caPath, "--http1.1", "-w", "%{http_version} %{http_code}", "-o", "/dev/null",
                                 base + "/openapi.json"])
        #expect(h1.output == "1.1 200")
        try await ApacheBench.expectCompletes(base + "/health", requests: 300, concurrency: 4, seconds: 5)
    }

    /// Graceful shutdown over TLS: an HTTP/2 connection left open after its answer (as URLSession's and
    /// AsyncHTTPClient's pools keep theirs) is sent GOAWAY and closed at SIGTERM, and `serve` exits at once — not
    /// after the idle timeout (60 s), which is how long it waited before the connection's management handler.
    @Test func sigtermClosesAnIdleHTTP2ConnectionAndServeExitsPromptly() async throws {
        try await Self.overHTTP2(commonName: "gatehouse-h2-shutdown") { server, client in
            #expect(try await client.get("/health").status == 200)
            #expect(try await client.get("/openapi.json").status == 200)
            server.process.terminate()
            try await Self.expectPromptExit(server)
            try await client.channel.closeFuture.get()
        }
    }

    /// Runs `body` with `serve` over TLS (a test CA's certificate) and an HTTP/2 connection to it.
    static func overHTTP2(commonName: String, initialWindowSize: Int? = nil,
                          _ body: (GatehouseProcess, HTTP2TestClient) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make(commonName: commonName)
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serve([])
        defer { server.stop() }
        let port = try #require(URLComponents(string: base)?.port)
        try await body(server, try await HTTP2TestClient.connect(port: port, caPath: certificates.caPath, initialWindowSize: initialWindowSize))
    }

    /// Expects `serve`, sent SIGTERM, to exit with status 0 within 5 s.
    static func expectPromptExit(_ server: GatehouseProcess) async throws {
        let start = ContinuousClock.now
        #expect(try await server.waitForExit(seconds: 8) == 0)
        #expect(ContinuousClock.now - start < .seconds(5), "serve took \(ContinuousClock.now - start) to exit with an HTTP/2 connection open")
    }

    /// A request NIO's decoder cannot read is answered in JSON, as every error: `400` for a malformed request line,
    /// length or field, `431` for a head over the decoder's bound — read whole by the client (raw, and curl), not reset
    /// while it was still sending — and the connection closed; the server serves on.
    @Test func requestsTheDecoderCannotReadAreAnsweredInJSON() async throws {
        try await TestServer.run { server in
            let malformed = ["GARBAGE LINE\r\n\r\n", "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                             "GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"]
            for request in malformed + ["GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "v", count: 120_000) + "\r\n\r\n"] {
                let connection = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
                await connection.send(request)
                let answer = try #require(await connection.readResponse(), "no answer to \(request.prefix(40))")
                #expect(answer.status == (malformed.contains(request) ? 400 : 431), "\(request.prefix(40))")
                #expect(answer.headers.contains { $0.name.lowercased() == "content-type" && $0.value.hasPrefix("application/json") })
                let code = try JSONDecoder().decode([String: String].self, from: Data(answer.body))["errorCode"]
                #expect(code == (malformed.contains(request) ? "BAD_REQUEST" : "REQUEST_HEADER_FIELDS_TOO_LARGE"))
                #expect(await connection.readToEnd().closed)
            }
            // curl (a client this project did not write) reads the 431 whole while it still sends its head.
            let big = try await curl(["-o", "-", "-w", "\n%{http_code}", "-H", "X-Big: " + String(repeating: "v", count: 100_000),
                                      server.baseURL + "/health"])
            #expect(big.output.hasSuffix("\n431") && big.output.contains("REQUEST_HEADER_FIELDS_TOO_LARGE"), "\(big.output)")
            #expect(try await HTTP.send(.GET, server.baseURL + "/health").status == 200)
        }
    }

    /// Graceful shutdown over HTTP/2 with an answer in progress: the answer held back by flow control when SIGTERM
    /// arrives (the client reads nothing of it until then) still arrives whole, and `serve` then exits at once. Closing
    /// the stream at the end of its answer, as an HTTP/1.1 connection closes, reset it and lost the answer's tail.
    @Test func sigtermLetsAnHTTP2AnswerInProgressFinishWholeThenServeExits() async throws {
        try await Self.overHTTP2(commonName: "gatehouse-h2-in-flight", initialWindowSize: 1024) { server, client in
            let whole = try await client.get("/openapi.json")
            #expect(whole.status == 200 && whole.bodyBytes > 4096)
            let process = server.process
            let held = try await client.get("/openapi.json") {
                process.terminate()
                try await Task.sleep(for: .milliseconds(500))   // the server quiesces meanwhile
            }
            #expect(held.status == 200)
            #expect(held.bodyBytes == whole.bodyBytes, "the answer in progress at SIGTERM arrived cut: \(held.bodyBytes) of \(whole.bodyBytes) bytes")
            try await Self.expectPromptExit(server)
        }
    }
}
