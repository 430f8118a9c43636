import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import GatehouseProtocol
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Application Token` and `Bearer` realms opened by Gatehouse access tokens.
@Suite(.timeLimit(.minutes(3))) struct GatewayTokenTests {
    static func tokenRealm(_ server: TestServer, scheme: ChallengeScheme = .applicationToken) -> RealmConfiguration {
        RealmConfiguration(name: "tokens", description: "Gatehouse", scheme: scheme, loginModules: [
            LoginModuleConfiguration(type: "gatehouse-token", flag: .required, jwksURL: server.baseURL + "/.well-known/jwks.json"),
        ])
    }

    @Test func aGatehouseTokenOpensAnApplicationTokenService() async throws {
        try await TestServer.run { server async throws in
            try await GatewayFixture.run({ upstream in
                GatewayConfiguration(realms: [Self.tokenRealm(server), { var r = Self.tokenRealm(server, scheme: .bearer); r.name = "bearer"; return r }()],
                                     services: [ServiceConfiguration(name: "t", path: "/t", upstream: upstream, realm: "tokens", requireRoles: ["accessRestricted"]),
                                                ServiceConfiguration(name: "b", path: "/b", upstream: upstream, realm: "bearer", requireRoles: ["accessRestricted"])])
            }) { fixture async throws in
                let none = try await fixture.get("/t/x")
                #expect(none.status == 401)
                #expect(none.headers["WWW-Authenticate"] == ["Application Token"])
                #expect(try await fixture.get("/b/x").headers["WWW-Authenticate"] == ["Bearer realm=\"Gatehouse\""])

                let client = try await TokenTests.pinClient(server)
                let token = try await client.obtainToken(scope: "accessRestricted").access_token
                let opened = try await fixture.get("/t/x", headers: [("Authorization", "Token \(token)")])
                #expect(opened.status == 200)
                #expect(String(decoding: opened.body, as: UTF8.self).hasSuffix("authorization=- body="))
                #expect(try await fixture.get("/b/x", headers: [("Authorization", "Bearer \(token)")]).status == 200)

                // Through the SDK's token handler.
                let handler = TokenChallengeHandler { _ in token }
                let http = GatewayHTTPClient(challengeHandler: handler, transport: AsyncHTTPClientTransport())
                #expect(try await http.status(URLRequest(url: URL(string: fixture.base + "/t/y")!)) == 200)
                #expect(try await http.status(URLRequest(url: URL(string: fixture.base + "/b/y")!)) == 200)

                // A token without the scope the service requires: authenticated, so 403.
                let registered = try await client.obtainToken(scope: nil).access_token
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(registered)")]).status == 403)

                // Garbage and foreign tokens: challenged again.
                for bad in ["garbage", "e30.e30.sig", Self.foreign(token)] {
                    let refused = try await fixture.get("/t/x", headers: [("Authorization", "Token \(bad)")])
                    #expect(refused.status == 401)
                    #expect(refused.headers["WWW-Authenticate"] == ["Application Token"])
                }
                // An expired token (com.sample.brief caps tokens at 8 s: time enough to use it once on a loaded machine).
                let brief = try await TokenTests.pinClient(server, app: "com.sample.brief", platform: "ios")
                let issued = try await brief.obtainToken(scope: "accessRestricted")
                let short = issued.access_token
                let expiry = ContinuousClock.now + .seconds(issued.expires_in)
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(short)")]).status == 200)
                try await Task.sleep(until: expiry + .milliseconds(1100))
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(short)")]).status == 401)
                // The SDK gives up when its token is refused twice.
                let stale = GatewayHTTPClient(challengeHandler: TokenChallengeHandler { _ in short }, transport: AsyncHTTPClientTransport())
                await #expect(throws: GatewayClientError.self) { _ = try await stale.send(URLRequest(url: URL(string: fixture.base + "/t/x")!)) }
            }
        }
    }

    /// The token's claims with a signature that does not verify.
    static func foreign(_ token: String) -> String {
        let parts = token.split(separator: ".")
        return "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
    }
}

/// The login chain's flags and the challenge parsing, without servers.
@Suite(.timeLimit(.minutes(3))) struct GatewayUnitTests {
    struct Fixed: LoginModule {
        let result: LoginResult
        func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult { result }
    }

    static let ok = Fixed(result: .success(Subject(name: "u", roles: ["A"])))
    static let ok2 = Fixed(result: .success(Subject(roles: ["B"])))
    static let bad = Fixed(result: .failure("no"))
    static let ignore = Fixed(result: .ignore)

    func run(_ entries: [LoginChain.Entry]) async -> LoginChain.Outcome {
        await LoginChain(entries).login(Credentials(scheme: "Basic", value: "x"), scheme: .basic)
    }

    @Test func aRevokedTokenNoLongerOpensAServiceCheckedByIntrospection() async throws {
        try await TestServer.run { server async throws in
            try await GatewayFixture.run({ upstream in
                GatewayConfiguration(
                    realms: [RealmConfiguration(name: "tokens", scheme: .applicationToken, loginModules: [
                        LoginModuleConfiguration(type: "gatehouse-token", flag: .required, introspection: IntrospectionConfiguration(
                            serverURL: server.baseURL, clientID: "balance-service", secret: "s3cret")),
                    ])],
                    services: [ServiceConfiguration(name: "t", path: "/t", upstream: upstream, realm: "tokens", requireRoles: ["accessRestricted"])])
            }) { fixture async throws in
                let api = server.baseURL + "/mfp/api"
                // Revoked by a logout from the check that granted it.
                let client = try await TokenTests.pinClient(server)
                let first = try await client.obtainToken(scope: "accessRestricted").access_token
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(first)")]).status == 200)
                #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
                let afterLogout = try await fixture.get("/t/x", headers: [("Authorization", "Token \(first)")])
                #expect(afterLogout.status == 401)
                #expect(afterLogout.header("WWW-Authenticate") == "Application Token")
                // Revoked by the client itself (RFC 7009).
                let other = try await TokenTests.pinClient(server)
                let second = try await other.obtainToken(scope: "accessRestricted").access_token
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(second)")]).status == 200)
                let revoke = try await HTTP.postForm(api + "/az/v1/revoke", [
                    ("token", second), ("client_assertion_type", ClientAssertionClaims.assertionType),
                    ("client_assertion", try other.assertion(jti: nil, aud: nil)),
                ])
                #expect(revoke.status == 200)
                #expect(try await fixture.get("/t/x", headers: [("Authorization", "Token \(second)")]).status == 401)
            }
        }
    }

    @Test func jaasFlags() async {
        #expect(await run([.init(Self.ok, flag: .required), .init(Self.ok2, flag: .optional)]) == .authenticated(Subject(name: "u", roles: ["A", "B"])))
        #expect(await run([.init(Self.bad, flag: .required), .init(Self.ok, flag: .sufficient)]) == .failed("no"))
        #expect(await run([.init(Self.bad, flag: .sufficient), .init(Self.ok, flag: .sufficient), .init(Self.bad, flag: .required)])
            == .authenticated(Subject(name: "u", roles: ["A"])))
        #expect(await run([.init(Self.bad, flag: .optional), .init(Self.ok2, flag: .optional)]) == .authenticated(Subject(roles: ["B"])))
        #expect(await run([.init(Self.bad, flag: .optional)]) == .failed("no"))
        #expect(await run([.init(Self.ignore, flag: .required)]) == .failed("no login module accepted the credentials"))
        // requisite stops at once: the later sufficient success does not count.
        #expect(await run([.init(Self.bad, flag: .requisite), .init(Self.ok, flag: .sufficient)]) == .failed("no"))
        #expect(await run([.init(Self.ok, flag: .requisite), .init(Self.ok2, flag: .required)]) == .authenticated(Subject(name: "u", roles: ["A", "B"])))
    }

    @Test func challengeWireForms() {
        #expect(ChallengeScheme.basic.challenge(realmDescription: "Demo") == "Basic realm=\"Demo\"")
        #expect(ChallengeScheme.applicationBasic.challenge(realmDescription: "Demo") == "Application Basic realm=\"Demo\"")
        #expect(ChallengeScheme.applicationToken.challenge(realmDescription: "Demo") == "Application Token")
        #expect(ChallengeScheme.bearer.challenge(realmDescription: "Demo") == "Bearer realm=\"Demo\"")
        let request = ChallengeRequest(location: URL(string: "ws://h/echo")!, challenge: "Application Basic realm=\"user \\\"pass\\\"\"")
        #expect(request.authenticationScheme == "Basic")
        #expect(request.isApplicationChallenge)
        #expect(request.realm == "user \"pass\"")
        let token = ChallengeRequest(location: URL(string: "ws://h/echo")!, challenge: "Application Token")
        #expect(token.authenticationScheme == "Token")
        #expect(token.authenticationParameters == nil)
        #expect(TokenChallengeHandler { _ in "t" }.canHandle(token))
        #expect(!BasicChallengeHandler().canHandle(token))
    }

    @Test func dispatchPatterns() {
        func handles(_ pattern: String, _ url: String) -> Bool {
            DispatchChallengeHandler().register(pattern, BasicChallengeHandler())
                .canHandle(ChallengeRequest(location: URL(string: url)!, challenge: "Basic realm=\"r\""))
        }
        #expect(handles("*.example.com:8000", "ws://a.example.com:8000"))
        #expect(!handles("*.example.com:8000", "ws://example.com:8000"))
        #expect(handles("server.example.com:*/*", "wss://server.example.com:9/x/y"))
        #expect(!handles("server.example.com:*/*", "wss://server.example.com:9"))
        #expect(handles("example.com/echo", "http://example.com/echo"))
        #expect(!handles("example.com/echo", "https://example.com/echo"))  // port 443 against 80
        #expect(!handles("example.com/echo", "http://example.com/other"))
    }
}
