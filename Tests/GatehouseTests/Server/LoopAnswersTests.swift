import Foundation
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// Introspections answered from memory on the event loop (``LoopAnswers``) are answered byte for byte as the router
/// answers them, keep their order among pipelined requests, and anything memory cannot answer goes to the router.
@Suite(.timeLimit(.minutes(3))) struct LoopAnswersTests {
    static let route = "/mfp/api/az/v1/introspection"
    static let basic = "Authorization: Basic " + Data("balance-service:s3cret".utf8).base64EncodedString()

    static let tokenRoute = "/mfp/api/az/v1/token"

    static func loopAnswers(_ server: TestServer, route: String = route) async throws -> Double {
        let text = String(decoding: try await HTTP.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
        return MetricsTests.samples(text)[#"gatehouse_http_loop_answers_total{route="\#(route)"}"#] ?? 0
    }

    static func routed(_ server: TestServer, route: String = route, status: Int) async throws -> Double {
        let text = String(decoding: try await HTTP.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
        return MetricsTests.samples(text)[#"gatehouse_http_requests_total{route="\#(route)",method="POST",status="\#(status)"}"#] ?? 0
    }

    /// The fields of an answer, in order, with their values but the date's (a second may pass between two answers).
    static func fields(_ response: RawHTTPResponse) -> [String] {
        response.headers.map { $0.name == "Date" ? "Date" : "\($0.name): \($0.value)" }
    }

    /// An introspection request as a client writes it, `lines` added to its head.
    static func introspection(_ token: String, _ lines: [String] = [basic], padding: Int = 0) -> String {
        let body = "token=\(token)" + (padding > 0 ? "&pad=" + String(repeating: "x", count: padding) : "")
        return "POST \(route) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + lines.map { $0 + "\r\n" }.joined() + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    /// Sends `request` on `connection` until it is answered on the loop, at most three times (under the suite's
    /// load the node's view of locked accounts can be due for its refresh, and then the router answers): the last
    /// answer, whether the loop gave it, and how many were sent.
    static func onTheLoop(_ server: TestServer, _ connection: RawHTTPConnection, _ request: String, route: String = route) async throws
        -> (answer: RawHTTPResponse, looped: Bool, sent: Int) {
        var sent = 0
        while true {
            let before = try await loopAnswers(server, route: route)
            await connection.send(request)
            sent += 1
            let answer = try #require(await connection.readResponse())
            let looped = try await loopAnswers(server, route: route) == before + 1
            if looped || sent == 3 { return (answer, looped, sent) }
        }
    }

    /// Long enough for every step of a test under load: a client read once is answered from memory throughout.
    static let lifetime = Duration.seconds(600)

    /// A user-login token of a fresh client (so that its introspection names a device and a user).
    static func userToken(_ server: TestServer) async throws -> (client: ProtocolClient, token: String) {
        var client = try ProtocolClient(server)
        try await client.register()
        let login = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo"]])
        #expect(login.status == 200)
        return (client, try await client.obtainToken(scope: "UserLogin").access_token)
    }

    @Test func anIntrospectionFromMemoryIsAnsweredAsTheRouterAnswersIt() async throws {
        try await TestServer.run(policy: IntrospectionTests.policy, introspectedClientLifetime: Self.lifetime) { server in
            var (client, token) = try await Self.userToken(server)
            let connection = try RawHTTPConnection(port: server.port)
            // The first: the caller's secret, the token and its client are read and checked by the router.
            await connection.send(Self.introspection(token))
            let routed = try #require(await connection.readResponse())
            #expect(try await Self.loopAnswers(server) == 0)
            // The second, on the same connection: all of it from memory, on the loop.
            let (looped, onTheLoop, sent) = try await Self.onTheLoop(server, connection, Self.introspection(token))
            #expect(onTheLoop)
            #expect(looped.status == 200)
            #expect(Self.fields(looped) == Self.fields(routed))
            #expect(Self.fields(looped).contains("Date"))
            if let date = looped.header("Date"), let routedDate = routed.header("Date") {
                #expect(date.count == routedDate.count && date.hasSuffix(" GMT"), "\(date) as \(routedDate)")
            }
            #expect(looped.body == routed.body)
            let answer = try JSONDecoder().decode(JSON.self, from: Data(looped.body))
            #expect(answer["active"] == true)
            #expect(answer["mfp-user"]?["id"] == "john")
            #expect(answer["mfp-device"]?["id"] == "device-com.sample.pincodeswift")
            // Every one is counted as a request of the route.
            #expect(try await Self.routed(server, status: 200) == Double(1 + sent))

            // A caller with a token (scope authorization.introspect): its first request through the router, then the loop.
            let serviceToken = try #require(try await HTTP.postForm(
                server.baseURL + "/mfp/api/az/v1/token", [("grant_type", "client_credentials"), ("scope", "authorization.introspect")],
                headers: [("Authorization", String(Self.basic.dropFirst("Authorization: ".count)))]).json?["access_token"]?.stringValue)
            let bearer = Self.introspection(token, ["Authorization: Bearer \(serviceToken)"])
            let before = try await Self.loopAnswers(server)
            await connection.send(bearer)
            #expect(try #require(await connection.readResponse()).body == routed.body)
            #expect(try await Self.loopAnswers(server) == before, "the caller's token is verified by the router first")
            let byToken = try await Self.onTheLoop(server, connection, bearer)
            #expect(byToken.looped)
            #expect(byToken.answer.body == routed.body)

            // The client logs out: the token, revoked, is answered inactive from memory too.
            #expect(try await client.logout(securityCheck: "UserLogin").status == 200)
            let revoked = try await Self.onTheLoop(server, connection, Self.introspection(token))
            #expect(revoked.looped)
            #expect(revoked.answer.text == #"{"active":false}"#)
        }
    }

    @Test func aClientCredentialsTokenFromMemoryIsAnsweredAsTheRouterAnswersIt() async throws {
        try await TestServer.run { server in
            let connection = try RawHTTPConnection(port: server.port)
            func request(scope: String = "authorization.introspect") -> String {
                let body = "grant_type=client_credentials&scope=\(scope)"
                return "POST \(Self.tokenRoute) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "\(Self.basic)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            }
            await connection.send(request())   // the secret verified with bcrypt, by the router
            let routed = try #require(await connection.readResponse())
            #expect(try await Self.loopAnswers(server, route: Self.tokenRoute) == 0)
            let (looped, onTheLoop, sent) = try await Self.onTheLoop(server, connection, request(), route: Self.tokenRoute)
            #expect(onTheLoop)
            #expect(looped.status == 200)
            #expect(Self.fields(looped) == Self.fields(routed).map { $0.hasPrefix("Content-Length") ? "Content-Length: \(looped.body.count)" : $0 })
            let first = try JSONDecoder().decode(JSON.self, from: Data(routed.body)), second = try JSONDecoder().decode(JSON.self, from: Data(looped.body))
            #expect(first.objectValue?.keys.sorted() == second.objectValue?.keys.sorted())
            #expect(second["scope"] == first["scope"] && second["token_type"] == first["token_type"] && second["expires_in"] == first["expires_in"], "\(looped.text) after \(routed.text)")
            let issued = try #require(second["access_token"]?.stringValue)
            #expect(issued != first["access_token"]?.stringValue)
            // The token from the loop is a token: it introspects active, as the balance service's.
            let introspected = try await HTTP.postForm(server.baseURL + Self.route, [("token", issued)],
                                                       headers: [("Authorization", String(Self.basic.dropFirst("Authorization: ".count)))]).json
            #expect(introspected?["active"] == true && introspected?["client_id"] == "balance-service")
            let text = String(decoding: try await HTTP.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
            #expect(MetricsTests.samples(text)[#"gatehouse_tokens_issued_total{grant="client_credentials"}"#] == Double(1 + sent))
            #expect(try await Self.routed(server, route: Self.tokenRoute, status: 200) == Double(1 + sent))
            // A scope the client may not have: the router's 400.
            let loopedBefore = try await Self.loopAnswers(server, route: Self.tokenRoute)
            await connection.send(request(scope: "reports"))
            #expect(await connection.readResponse()?.status == 400)
            #expect(try await Self.loopAnswers(server, route: Self.tokenRoute) == loopedBefore)
        }
    }

    @Test func theDateIsWrittenAsHummingbirdWritesIt() {
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(1_795_624_740) == "Wed, 25 Nov 2026 16:39:00 GMT")
        #expect(HTTPDate.format(951_786_061) == "Tue, 29 Feb 2000 01:01:01 GMT")
    }

    @Test func whatMemoryCannotAnswerGoesToTheRouter() async throws {
        try await TestServer.run(policy: IntrospectionTests.policy, introspectedClientLifetime: Self.lifetime) { server in
            let (_, token) = try await Self.userToken(server)
            let connection = try RawHTTPConnection(port: server.port)
            await connection.send(Self.introspection(token))
            #expect(await connection.readResponse()?.status == 200)
            let wrongSecret = "Authorization: Basic " + Data("balance-service:wrong".utf8).base64EncodedString()
            let cases: [(request: String, status: Int)] = [
                (Self.introspection(token, [wrongSecret]), 401),                                      // a wrong secret is counted
                (Self.introspection(token, [Self.basic, "Origin: http://elsewhere.test"]), 200),      // CORS is the router's
                (Self.introspection(token, [Self.basic], padding: 20 * 1024), 200),                  // a body over 16 KiB
                (Self.introspection(token, [Self.basic, "Connection: keep-alive"]), 200),            // a Connection field
                (Self.introspection(token + "x", [Self.basic]), 200),                               // a token never verified
                (Self.introspection(token, []), 401),                                                // no caller
            ]
            for (request, status) in cases {
                await connection.send(request)
                #expect(await connection.readResponse()?.status == status, "\(request.prefix(300))")
            }
            #expect(try await Self.loopAnswers(server) == 0)
            // The same connection still answers from memory.
            let after = try await Self.onTheLoop(server, connection, Self.introspection(token))
            #expect(after.looped && after.answer.status == 200)
            // `Connection: close`: answered, then the connection is closed (as the fuzzer's requests expect).
            await connection.send(Self.introspection(token, [Self.basic, "Connection: close"]))
            let (bytes, closed) = await connection.readToEnd()
            #expect(closed)
            #expect(RawHTTPResponse(bytes)?.status == 200)
        }
    }

    @Test func pipelinedRequestsKeepTheirOrder() async throws {
        try await TestServer.run(policy: IntrospectionTests.policy, introspectedClientLifetime: Self.lifetime) { server in
            let (_, token) = try await Self.userToken(server)
            let connection = try RawHTTPConnection(port: server.port)
            await connection.send(Self.introspection(token))
            let active = try #require(await connection.readResponse()).text
            #expect(try await Self.onTheLoop(server, connection, Self.introspection(token)).looped)
            let warm = try await Self.loopAnswers(server)
            let health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let inactive = Self.introspection("not-a-token")
            // Answered from memory (two), by the router, then introspections behind a routed request (handed on
            // too, to be answered in turn), and one from memory again at the end.
            await connection.send(Self.introspection(token) + Self.introspection(token) + health + Self.introspection(token)
                                  + inactive + Self.introspection(token) + health + Self.introspection(token))
            let ok = #"{"status":"ok"}"#, inactiveAnswer = #"{"active":false}"#
            let expected = [active, active, ok, active, inactiveAnswer, active, ok, active]
            for (index, body) in expected.enumerated() {
                let response = await connection.readResponse()
                #expect(response?.status == 200, "answer \(index)")
                #expect(response?.text == body, "answer \(index)")
            }
            let looped = try await Self.loopAnswers(server) - warm
            #expect(looped >= 1 && looped <= 6, "\(looped) of the 6 introspections answered on the loop")
        }
    }
}
