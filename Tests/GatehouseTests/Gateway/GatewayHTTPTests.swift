import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's HTTP side: challenges, login modules, roles and the proxy, with the SDK's challenge handlers.
@Suite(.timeLimit(.minutes(3))) struct GatewayHTTPTests {
    static func services(_ upstream: String, realm: String, roles: [String] = ["AUTHORIZED"]) -> [ServiceConfiguration] {
        [ServiceConfiguration(name: "api", path: "/api", upstream: upstream + "/v1", realm: realm, requireRoles: roles),
         ServiceConfiguration(name: "open", path: "/open", upstream: upstream)]
    }

    @Test func yamlConfigurationChallengesAndProxies() async throws {
        let usersFile = TestServer.temporaryDirectory() + "-users.yaml"
        try """
            - username: joe
              passwordHash: "\(GatewayFixture.joe.passwordHash)"
              roles: [AUTHORIZED]
            """.write(toFile: usersFile, atomically: true, encoding: .utf8)
        try await GatewayFixture.run({ upstream in
            try GatewayConfiguration.decode(yaml: """
                host: 127.0.0.1
                port: 0
                realms:
                  - name: demo
                    description: Demo Realm
                    scheme: Basic
                    loginModules:
                      - { type: users, flag: required, usersFile: "\(usersFile)" }
                services:
                  - { name: api, path: /api, upstream: "\(upstream)/v1", realm: demo, requireRoles: [AUTHORIZED] }
                  - { name: open, path: /open, upstream: "\(upstream)" }
                """)
        }) { fixture async throws in
            // No credentials: 401 with the realm's scheme and description.
            let none = try await fixture.get("/api/items?q=1")
            #expect(none.status == 401)
            #expect(none.header("WWW-Authenticate") == "Basic realm=\"Demo Realm\"")
            // Wrong credentials: challenged again.
            let wrong = try await fixture.get("/api/items", headers: [("Authorization", basicAuthorization("joe", "nope"))])
            #expect(wrong.status == 401)
            #expect(wrong.header("WWW-Authenticate") == "Basic realm=\"Demo Realm\"")
            // Right credentials: proxied; the path is mapped, the query kept, Authorization not forwarded.
            let right = try await fixture.get("/api/items?q=1", headers: [("Authorization", basicAuthorization("joe", "welcome"))])
            #expect(right.status == 200)
            #expect(String(decoding: right.body, as: UTF8.self) == "GET /v1/items?q=1 user=joe authorization=- body=")
            // A body is streamed to the upstream.
            let posted = try await HTTP.send(.POST, fixture.base + "/api/items", headers: [
                ("Authorization", basicAuthorization("joe", "welcome")), ("Content-Type", "text/plain"),
            ], body: Data("hello".utf8))
            #expect(String(decoding: posted.body, as: UTF8.self) == "POST /v1/items user=joe authorization=- body=hello")
            // An open service needs nothing; an unknown path is 404.
            #expect(try await fixture.get("/open/x").status == 200)
            #expect(try await fixture.get("/nowhere").status == 404)
            #expect(fixture.gateway.statistics.counters(realm: "demo").attempts == 3)
        }
    }

    @Test func applicationBasicNeverCarriesPlainBasic() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .applicationBasic, description: "Demo Realm")],
                                 services: Self.services(upstream, realm: "demo"))
        }) { fixture async throws in
            for headers in [[], [("Authorization", basicAuthorization("joe", "nope"))], [("Authorization", "Token abc")]] {
                let answer = try await fixture.get("/api/x", headers: headers)
                #expect(answer.status == 401)
                let challenges = answer.headers["WWW-Authenticate"]
                #expect(challenges == ["Application Basic realm=\"Demo Realm\""])
                #expect(!challenges.contains { $0.hasPrefix("Basic") })
            }
            // The SDK's BasicChallengeHandler answers it (the prefix is stripped, the reply is Basic).
            let client = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: CountingLoginHandler(.joe)), transport: AsyncHTTPClientTransport())
            let (data, response) = try await client.send(URLRequest(url: URL(string: fixture.base + "/api/x")!))
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "GET /v1/x user=joe authorization=- body=")
            // Credentials from the declared query parameter.
            let encoded = Data("joe:welcome".utf8).base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await fixture.get("/api/x?credentials=\(encoded)").status == 200)
        }
    }

    @Test func twoWrongTriesGiveUpAndTheGatewaySawExactlyThose() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .applicationBasic)], services: Self.services(upstream, realm: "demo"))
        }) { fixture async throws in
            let login = CountingLoginHandler(repeating: .wrong)
            let client = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: login), maxAttempts: 2)
            let url = URL(string: fixture.base + "/api/x")!
            await #expect(throws: GatewayClientError.retryLimitReached(location: url, attempts: 2, challenge: "Application Basic realm=\"demo\"")) {
                _ = try await client.send(URLRequest(url: url))
            }
            #expect(login.asked == 2)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.attempts == 2)
            #expect(counters.failures == 2)
            #expect(counters.challenges == 3)  // the first request carried nothing
            // A login handler that cancels: the handler gives up at once.
            let cancelling = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: ClosureLoginHandler { _ in nil }))
            await #expect(throws: GatewayClientError.self) { _ = try await cancelling.send(URLRequest(url: url)) }
            #expect(fixture.gateway.statistics.counters(realm: "demo").attempts == 2)
            // Wrong then right: the second try gets through.
            let second = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: CountingLoginHandler(.wrong, .joe)))
            #expect(try await second.status(URLRequest(url: url)) == 200)
        }
    }

    @Test func aUserWithoutTheRoleGets403NotAChallenge() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .basic)], services: Self.services(upstream, realm: "demo"))
        }) { fixture async throws in
            let forbidden = try await fixture.get("/api/x", headers: [("Authorization", basicAuthorization("ann", "secret"))])
            #expect(forbidden.status == 403)
            #expect(forbidden.header("WWW-Authenticate") == nil)
            #expect(forbidden.header("Content-Type") == "application/json; charset=utf-8")
            #expect(forbidden.json?["error"]?.stringValue == "forbidden")
            let login = CountingLoginHandler(repeating: .ann)
            let client = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: login), transport: AsyncHTTPClientTransport())
            #expect(try await client.status(URLRequest(url: URL(string: fixture.base + "/api/x")!)) == 403)
            #expect(login.asked == 1)
        }
    }

    @Test func dispatchGivesEachLocationItsOwnHandler() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("first", scheme: .applicationBasic, description: "First"),
                         GatewayFixture.usersRealm("second", scheme: .basic, description: "Second")],
                services: [ServiceConfiguration(name: "a", path: "/a", upstream: upstream, realm: "first", requireRoles: ["AUTHORIZED"]),
                           ServiceConfiguration(name: "b", path: "/b", upstream: upstream, realm: "second", requireRoles: ["GUEST"])])
        }) { fixture async throws in
            let forA = CountingLoginHandler(repeating: .joe)
            let forB = CountingLoginHandler(repeating: .ann)
            let port = fixture.gatewayApp.port
            let dispatch = DispatchChallengeHandler()
                .register("127.0.0.1:\(port)/a/*", BasicChallengeHandler(loginHandler: forA))
                .register("127.0.0.1:\(port)/b/*", BasicChallengeHandler(loginHandler: forB))
                .register("*:*/*", TokenChallengeHandler { _ in "unused" })
            let client = GatewayHTTPClient(challengeHandler: dispatch, transport: AsyncHTTPClientTransport())
            #expect(try await client.status(URLRequest(url: URL(string: fixture.base + "/a/x")!)) == 200)
            #expect(try await client.status(URLRequest(url: URL(string: fixture.base + "/b/y/z")!)) == 200)
            #expect(forA.asked == 1)
            #expect(forB.asked == 1)
            // Realm-specific login handlers inside one BasicChallengeHandler.
            let byRealm = BasicChallengeHandler().setRealmLoginHandler("First", CountingLoginHandler(.joe)).setRealmLoginHandler("Second", CountingLoginHandler(.ann))
            let realmClient = GatewayHTTPClient(challengeHandler: byRealm, transport: AsyncHTTPClientTransport())
            #expect(try await realmClient.status(URLRequest(url: URL(string: fixture.base + "/a/x")!)) == 200)
            #expect(try await realmClient.status(URLRequest(url: URL(string: fixture.base + "/b/x")!)) == 200)
            // No handler for the location and scheme: a clear error.
            let none = GatewayHTTPClient(challengeHandler: DispatchChallengeHandler().register("example.com/a", BasicChallengeHandler()), transport: AsyncHTTPClientTransport())
            await #expect(throws: GatewayClientError.self) { _ = try await none.send(URLRequest(url: URL(string: fixture.base + "/a/x")!)) }
        }
    }

    @Test func aLocationPatternTakesItsSchemesPort() throws {
        // The README's KAAZING sample: TLS locations are registered with their scheme (or a port).
        let basic = BasicChallengeHandler()
        let token = TokenChallengeHandler { _ in "unused" }
        let dispatch = DispatchChallengeHandler()
            .register("wss://gateway.example.com/ws/*", basic)
            .register("https://gateway.example.com/api/*", token)
        func handler(_ url: String, _ challenge: String) throws -> (any HTTPChallengeHandler)? {
            dispatch.handler(for: ChallengeRequest(location: try #require(URL(string: url)), challenge: challenge))
        }
        #expect(try handler("wss://gateway.example.com/ws/echo", "Basic realm=\"r\"") as? BasicChallengeHandler === basic)
        #expect(try handler("https://gateway.example.com/api/balance", "Application Token") is TokenChallengeHandler)
        // Without a scheme a pattern is http's (port 80): it does not take a TLS location.
        let plain = DispatchChallengeHandler().register("gateway.example.com/ws/*", basic)
        #expect(plain.handler(for: ChallengeRequest(location: try #require(URL(string: "wss://gateway.example.com/ws/echo")), challenge: "Basic realm=\"r\"")) == nil)
        #expect(DispatchChallengeHandler().register("gateway.example.com:*/ws/*", basic)
            .handler(for: ChallengeRequest(location: try #require(URL(string: "wss://gateway.example.com/ws/echo")), challenge: "Basic realm=\"r\"")) != nil)
    }

    @Test func aVerifiedPasswordIsRememberedButNeverAnotherOne() async {
        let module = UsersLoginModule(users: [GatewayFixture.joe], verifiedLifetime: .milliseconds(300))
        func login(_ user: String, _ password: String) async -> LoginResult {
            await module.login(Credentials(scheme: "Basic", value: String(basicAuthorization(user, password).dropFirst(6))), scheme: .basic)
        }
        let joe = LoginResult.success(Subject(name: "joe", roles: ["AUTHORIZED"]))
        #expect(await login("joe", "welcome") == joe)
        #expect(await login("joe", "welcome") == joe)  // remembered
        #expect(await login("joe", "welcomeX") == .failure("wrong user name or password"))
        #expect(await login("joe", "Welcome") == .failure("wrong user name or password"))
        #expect(await login("ann", "welcome") == .failure("wrong user name or password"))
        try? await Task.sleep(for: .milliseconds(400))
        #expect(await login("joe", "welcome") == joe)  // verified again after the lifetime
        let uncached = UsersLoginModule(users: [GatewayFixture.joe], verifiedLifetime: .zero)
        #expect(await uncached.login(Credentials(scheme: "Basic", value: String(basicAuthorization("joe", "nope").dropFirst(6))), scheme: .basic)
            == .failure("wrong user name or password"))
    }
}
