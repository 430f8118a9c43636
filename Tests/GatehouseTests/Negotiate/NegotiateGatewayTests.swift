import Foundation
import GatehouseClient
import GatehouseClientKerberos
import GatehouseClientNIO
import GatehouseGateway
import GatehouseProtocol
import Testing

/// A module that grants a fixed role to any credentials (to show the chain's JAAS flags around `kerberos5`).
struct FixedRoleModule: LoginModule {
    let role: String
    func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        .success(Subject(roles: [role]))
    }
}

/// Negotiate and Application Negotiate realms against a real MIT KDC (scripts/throwaway-kdc): tickets from
/// `kinit`, tokens from `curl --negotiate` and from the SDK's `NegotiateChallengeHandler`, over HTTP and WebSocket.
@Suite(.timeLimit(.minutes(3))) struct NegotiateGatewayTests {
    /// `/echo` behind a `Negotiate` realm, `/app` behind an `Application Negotiate` one, both requiring AUTHORIZED;
    /// alice has it, bob has GUEST only.
    static func configuration(_ kdc: TestKDC, upstream: String, flag: LoginModuleFlag = .required,
                              extra: [LoginModuleConfiguration] = [], roles: [String] = ["AUTHORIZED"]) -> GatewayConfiguration {
        let kerberos = LoginModuleConfiguration(type: "kerberos5", flag: flag, keytab: kdc.keytab, servicePrincipal: kdc.service,
                                                principalRoles: ["alice": ["AUTHORIZED"], "bob@\(kdc.realm)": ["GUEST"]])
        return GatewayConfiguration(
            realms: [
                RealmConfiguration(name: "kerberos", scheme: .negotiate, loginModules: [kerberos] + extra),
                RealmConfiguration(name: "app-kerberos", scheme: .applicationNegotiate, loginModules: [kerberos] + extra),
            ],
            services: [
                ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "kerberos", requireRoles: roles, webSocket: true),
                ServiceConfiguration(name: "app", path: "/app", upstream: upstream + "/echo", realm: "app-kerberos", requireRoles: roles, webSocket: true),
            ])
    }

    /// A token for `service` from `cache`, as the SDK makes it.
    static func token(_ cache: String, for service: String) async throws -> String {
        "Negotiate " + (try await KerberosInitiator(credentialCache: cache).token(for: service)).base64EncodedString()
    }

    @Test func curlWithATicketGets200AndTheMutualAuthenticationToken() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let url = "http://localhost:\(fixture.gatewayApp.port)/echo/hello"
            let answer = try await TestKDC.curl(url, cache: alice)
            #expect(answer.status == 200, "\(answer.headers)")
            // RFC 4559 §5: the acceptor's token comes back on the success.
            #expect(answer.headers.lowercased().contains("www-authenticate: negotiate "))
            // Repeated requests: a fresh token each time, each accepted.
            for _ in 0..<3 { #expect(try await TestKDC.curl(url, cache: alice).status == 200) }
        }
    }

    @Test func noTicketOrNoTokenIsChallengedWithNegotiate() async throws {
        let kdc = try TestKDC.current()
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let missing = try await fixture.get("/echo/x")
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == "Negotiate")
            #expect(try await fixture.get("/app/x").header("WWW-Authenticate") == "Application Negotiate")
            // curl without a ticket: it cannot answer, the 401 stands.
            let curl = try await TestKDC.curl("http://localhost:\(fixture.gatewayApp.port)/echo/x", cache: kdc.emptyCache)
            #expect(curl.status == 401)
            // Bad tokens: the challenge again, never a 500.
            for bad in ["Negotiate", "Negotiate !!!not-base64", "Negotiate AAAA", "Negotiate " + Data(repeating: 0x60, count: 300).base64EncodedString(),
                        "Basic YWxpY2U6eA=="] {
                let answer = try await fixture.get("/echo/x", headers: [("Authorization", bad)])
                #expect(answer.status == 401, "\(bad)")
                #expect(answer.header("WWW-Authenticate") == "Negotiate")
            }
        }
    }

    @Test func aTicketForAnotherServiceAReplayOrAnExpiredTicketIsRefused() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        // 6 s of life: long enough to make a token from it on a loaded machine (3 s failed now and then).
        let shortLived = try await kdc.kinit("alice", lifetime: "6s")
        let beforeExpiry = try await Self.token(shortLived, for: kdc.service)
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let other = try await Self.token(alice, for: kdc.otherService)
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", other)]).status == 401)
            // A token is good once: MIT's replay cache refuses it the second time.
            let once = try await Self.token(alice, for: kdc.service)
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", once)]).status == 200)
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", once)]).status == 401)
            // A token whose ticket has expired (6 s of life, 10 s of tolerated skew in the test realm: a loaded CI
            // machine may take seconds between making a token and checking it).
            try await Task.sleep(for: .seconds(17))
            let expired = try await fixture.get("/echo/x", headers: [("Authorization", beforeExpiry)])
            #expect(expired.status == 401)
            #expect(expired.header("WWW-Authenticate") == "Negotiate")
            // And the SDK cannot make a new one from the expired ticket: a clear error, no token.
            await #expect(throws: KerberosInitiatorError.self) { _ = try await Self.token(shortLived, for: kdc.service) }
        }
    }

    @Test func aPrincipalWithoutTheRoleIsForbidden() async throws {
        let kdc = try TestKDC.current()
        let bob = try await kdc.kinit("bob")
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            #expect(try await TestKDC.curl("http://localhost:\(fixture.gatewayApp.port)/echo/x", cache: bob).status == 403)
            let websocket = try await GatewayWebSocketClient.probe(url: fixture.wsBase + "/echo", authorization: try await Self.token(bob, for: kdc.service))
            #expect(websocket.status == 403)
        }
    }

    @Test func theSDKHandlerAnswersOverHTTPAloneAndInADispatchHandler() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let handler = NegotiateChallengeHandler(credentialCache: alice, service: { _ in kdc.service })
            let client = GatewayHTTPClient(challengeHandler: handler, transport: AsyncHTTPClientTransport())
            for path in ["/echo/x", "/app/x"] {
                let response = try await client.send(TransportRequest(method: "GET", url: URL(string: fixture.base + path)!, timeout: .seconds(20)))
                #expect(response.status == 200, "\(path)")
                #expect(response.header("WWW-Authenticate")?.hasPrefix("Negotiate ") == true)
            }
            // Registered by location with another scheme's handler beside it.
            let dispatch = DispatchChallengeHandler()
                .register("127.0.0.1:*/echo/*", BasicChallengeHandler(loginHandler: CountingLoginHandler(.joe)))
                .register("127.0.0.1:*/echo/*", handler)
            let dispatched = GatewayHTTPClient(challengeHandler: dispatch, transport: AsyncHTTPClientTransport())
            #expect(try await dispatched.send(TransportRequest(method: "GET", url: URL(string: fixture.base + "/echo/y")!, timeout: .seconds(20))).status == 200)
        }
    }

    @Test func theSDKHandlerOpensAWebSocketThroughTheGateway() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let handler = NegotiateChallengeHandler(credentialCache: alice, service: { _ in kdc.service })
            for path in ["/echo", "/app"] {
                let dispatch = DispatchChallengeHandler().register("127.0.0.1:*/*", handler)
                try await GatewayWebSocketClient.connect(url: fixture.wsBase + path, challengeHandler: dispatch, logger: GatewayFixture.logger,
                                                         handler: GatewayWebSocketTests.echo(["hello", "through Kerberos"]))
            }
            // Without a token the upgrade is challenged like every scheme.
            let probe = try await GatewayWebSocketClient.probe(url: fixture.wsBase + "/echo")
            #expect(probe.status == 401)
            #expect(probe.challenge == "Negotiate")
        }
    }

    @Test func kerberosTokensOpenThroughKaazingsExtendedHandshake() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            for (path, challenge) in [("/echo", "Negotiate"), ("/app", "Application Negotiate")] {
                // On the wire: the challenge inside the WebSocket, a token in the next request, the inner 101 with the
                // acceptor's mutual-authentication token (RFC 4559 §5).
                let wire = try await KaazingWire.open(port: fixture.gatewayApp.port, path: path)
                try await wire.send(KaazingHandshake.Request(target: path))
                let first = try await wire.answer()
                #expect(first.status == 401)
                #expect(first.value(of: "WWW-Authenticate") == challenge)
                try await wire.send(KaazingHandshake.Request(target: path, fields: [("Authorization", try await Self.token(alice, for: kdc.service))]))
                let opening = try await wire.answer()
                #expect(opening.status == 101)
                #expect(opening.value(of: "WWW-Authenticate")?.hasPrefix("Negotiate ") == true)
                // The SDK's handler, in band.
                let handler = NegotiateChallengeHandler(credentialCache: alice, service: { _ in kdc.service })
                let echoed = Calls<String>()
                try await GatewayWebSocketClient.connectInBand(url: fixture.wsBase + path, challengeHandler: handler, logger: GatewayFixture.logger) {
                    messages, outbound, _ in
                    try await outbound.write(.text("kerberos in band"))
                    for try await message in messages {
                        if case .text(let text) = message { echoed.record(text); return }
                    }
                }
                #expect(echoed.all == ["kerberos in band"])
            }
        }
    }

    @Test func withoutATicketTheSDKGivesUpCleanly() async throws {
        let kdc = try TestKDC.current()
        try await GatewayFixture.run({ Self.configuration(kdc, upstream: $0) }) { fixture async throws in
            let handler = NegotiateChallengeHandler(credentialCache: kdc.emptyCache, service: { _ in kdc.service })
            let client = GatewayHTTPClient(challengeHandler: handler, transport: AsyncHTTPClientTransport())
            let url = URL(string: fixture.base + "/echo/x")!
            await #expect(throws: GatewayClientError.cancelled(location: url, challenge: "Negotiate")) {
                _ = try await client.send(TransportRequest(method: "GET", url: url, timeout: .seconds(20)))
            }
            #expect(handler.lastFailure?.description.contains("no Kerberos credentials") == true)
            await #expect(throws: (any Error).self) {
                try await GatewayWebSocketClient.connect(url: fixture.wsBase + "/echo", challengeHandler: handler, logger: GatewayFixture.logger,
                                                         handler: { _, _ in })
            }
        }
    }

    @Test func kerberosWorksInAChainWithJAASFlags() async throws {
        let kdc = try TestKDC.current()
        let alice = try await kdc.kinit("alice")
        let extra = [LoginModuleConfiguration(type: "auditor", flag: .optional)]
        let custom: [String: any LoginModule] = ["auditor": FixedRoleModule(role: "AUDITOR")]
        // requisite kerberos5 + optional module: roles merged on success; a bad token fails at once.
        try await GatewayFixture.run(customModules: custom, {
            Self.configuration(kdc, upstream: $0, flag: .requisite, extra: extra, roles: ["AUTHORIZED", "AUDITOR"])
        }) { fixture async throws in
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", try await Self.token(alice, for: kdc.service))]).status == 200)
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", "Negotiate AAAA")]).status == 401)
        }
        // optional kerberos5 + optional module: the other module alone lets a bad token in, without alice's role.
        try await GatewayFixture.run(customModules: custom, {
            Self.configuration(kdc, upstream: $0, flag: .optional, extra: extra, roles: ["AUDITOR"])
        }) { fixture async throws in
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", "Negotiate AAAA")]).status == 200)
        }
    }

    @Test func yamlConfigurationAndItsErrors() async throws {
        let kdc = try TestKDC.current()
        let yaml = """
        realms:
          - name: kerberos
            scheme: Negotiate
            loginModules:
              - type: kerberos5
                flag: required
                keytab: \(kdc.keytab)
                servicePrincipal: \(kdc.service)
                principalRoles: { alice: [AUTHORIZED], "*": [GUEST] }
          - name: app
            scheme: Application Negotiate
            loginModules: [{ type: kerberos5, flag: required, keytab: \(kdc.keytab) }]
        services:
          - { name: echo, path: /echo, upstream: "http://127.0.0.1:1/echo", realm: kerberos, requireRoles: [AUTHORIZED] }
        """
        let configuration = try GatewayConfiguration.decode(yaml: yaml)
        #expect(configuration.realms.map(\.scheme) == [.negotiate, .applicationNegotiate])
        #expect(configuration.realms[0].loginModules[0].principalRoles?["*"] == ["GUEST"])
        _ = try Gateway(configuration: configuration, logger: GatewayFixture.logger)
        // A keytab that is not there, or without the service's keys: refused at start, not at the first request.
        var missing = configuration
        missing.realms[0].loginModules[0].keytab = kdc.directory + "/no-such.keytab"
        #expect(throws: GatewayConfigurationError.self) { _ = try Gateway(configuration: missing, logger: GatewayFixture.logger) }
        var wrong = configuration
        wrong.realms[0].loginModules[0].servicePrincipal = kdc.otherService
        #expect(throws: GatewayConfigurationError.self) { _ = try Gateway(configuration: wrong, logger: GatewayFixture.logger) }
    }
}
