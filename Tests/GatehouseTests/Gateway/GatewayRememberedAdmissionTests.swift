import Foundation
import GatehouseChecks
@testable import GatehouseGateway
import HTTPTypes
import Testing

/// A keep-alive connection's `Basic` admission is remembered (``RememberedAdmission``), never beyond what the
/// login chain itself would admit: not for other credentials, another service, after a password failed anywhere,
/// past the pair's verified lifetime, or when the realm or its chain reads more than remembered passwords.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GatewayRememberedAdmissionTests {
    /// A realm that reads `Authorization` alone (no query parameter), as the memory needs.
    static func configuration(_ upstream: String, modules: [LoginModuleConfiguration]? = nil) -> GatewayConfiguration {
        var configuration = GatewayConfiguration(
            realms: [RealmConfiguration(name: "demo", scheme: .basic, loginModules: modules ?? [
                LoginModuleConfiguration(type: "users", flag: .required, users: [GatewayFixture.joe, GatewayFixture.ann]),
            ])],
            services: [
                ServiceConfiguration(name: "api", path: "/api", upstream: upstream, realm: "demo", requireRoles: []),
                ServiceConfiguration(name: "admin", path: "/admin", upstream: upstream, realm: "demo", requireRoles: ["AUTHORIZED"]),
            ])
        configuration.accountLockout = AccountLockoutSettings(threshold: 3, windowSec: 60, durationSec: 30, maxDurationSec: 30)
        return configuration
    }

    /// `GET target` on `connection` (kept alive) with `authorization`: the status and the user the upstream saw.
    static func get(_ connection: RawHTTPConnection, _ target: String, _ authorization: String) async throws -> (status: Int, user: String?) {
        #expect(await connection.send("GET \(target) HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: \(authorization)\r\n\r\n"))
        let response = try #require(await connection.readResponse())
        let user = response.status == 200 ? response.text.split(separator: " ").first { $0.hasPrefix("user=") }.map { String($0.dropFirst(5)) } : nil
        return (response.status, user)
    }

    static let joe: HTTPFields = [.authorization: basicAuthorization("joe", "welcome")]

    /// A gateway of `configuration` (no upstream) and its two services.
    static func gateway(_ configuration: GatewayConfiguration, modules: [String: any LoginModule] = [:]) throws
        -> (gateway: Gateway, api: ProtectedService, admin: ProtectedService) {
        let gateway = try Gateway(configuration: configuration, customModules: modules, logger: GatewayFixture.logger)
        let (api, _) = try #require(gateway.route(try RequestTarget(parsing: "/api/x")))
        let (admin, _) = try #require(gateway.route(try RequestTarget(parsing: "/admin/x")))
        return (gateway, api, admin)
    }

    /// A memory of joe's admission to `service` that admits him now: verified by the chain (bcrypt), then
    /// remembered. A password failing in another test meanwhile resets it, so a few tries; `nil` when none is made.
    static func remembered(_ gateway: Gateway, _ service: ProtectedService) async -> RememberedAdmission? {
        for _ in 0..<20 {
            guard case .allow = await gateway.admit(AdmissionRequest(fields: joe, query: nil, service: service)),
                  let made = gateway.admitNowRemembering(AdmissionRequest(fields: joe, query: nil, service: service, client: ClientIdentity(peer: "127.0.0.1")))?.remembered else { return nil }
            if made.admits(joe, to: service) { return made }
        }
        return nil
    }

    /// A request admitted by its connection's memory still gets its own forwarding fields: a trusted proxy's
    /// `X-Forwarded-For` of each request, appended to.
    @Test func aRememberedAdmissionKeepsEachRequestsForwardingFields() async throws {
        try await RecordingFixture.run({ upstream in
            var configuration = Self.configuration(upstream)
            configuration.trustedProxies = ["127.0.0.1"]
            return configuration
        }) { fixture in
            let connection = try RawHTTPConnection(port: fixture.port)
            let joe = basicAuthorization("joe", "welcome")
            let before = fixture.gateway.statistics.counters(realm: "demo").remembered
            for client in ["203.0.113.1", "198.51.100.7", "192.0.2.44"] {
                #expect(await connection.send("GET /api/x HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: \(joe)\r\nX-Forwarded-For: \(client)\r\n\r\n"))
                let response = try #require(await connection.readResponse())
                #expect(response.status == 200)
                #expect(try RecordingUpstream.seen(response.body).header("X-Forwarded-For") == "\(client), 127.0.0.1")
            }
            // The later requests were admitted by the memory (unless a password failed meanwhile elsewhere).
            #expect(fixture.gateway.statistics.counters(realm: "demo").remembered > before || UnsettledAccounts.shared.failures > 0)
        }
    }

    @Test func oneConnectionIsAnsweredForWhoeverItsCredentialsName() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let connection = try RawHTTPConnection(port: fixture.gatewayApp.port)
            let joe = basicAuthorization("joe", "welcome"), ann = basicAuthorization("ann", "secret")
            for _ in 0..<3 { #expect(try await Self.get(connection, "/api/x", joe) == (200, "joe")) }
            // Several users on one connection (a proxy's), each meeting the other's remembered admission.
            #expect(try await Self.get(connection, "/api/x", ann) == (200, "ann"))
            #expect(try await Self.get(connection, "/api/x", ann) == (200, "ann"))
            #expect(try await Self.get(connection, "/api/x", joe) == (200, "joe"))
            // A wrong password of the same length right after joe's admission.
            #expect(try await Self.get(connection, "/api/x", basicAuthorization("joe", "welcomf")).status == 401)
            #expect(try await Self.get(connection, "/api/x", joe) == (200, "joe"))
            // Another service with another constraint: ann lacks its role, joe has it.
            #expect(try await Self.get(connection, "/admin/x", ann).status == 403)
            #expect(try await Self.get(connection, "/admin/x", joe) == (200, "joe"))
            #expect(try await Self.get(connection, "/api/x", "Basic " + Data("joe:welcome ".utf8).base64EncodedString()).status == 401)
        }
    }

    @Test func aConnectionsRepeatedCredentialsAreAdmittedByItsMemoryAndCountedAsBefore() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let requests = 8
            // The pair verified by bcrypt first, on a connection of its own.
            #expect(try await Self.get(RawHTTPConnection(port: fixture.gatewayApp.port), "/api/x", basicAuthorization("joe", "welcome")) == (200, "joe"))
            var made = 1
            // On a fresh connection each time: the first request is admitted from the verified pairs, the rest by
            // the connection's memory. A password failing in another test meanwhile sends the next request back to
            // the chain, so the exact count is checked in a run where none failed (a few tries), bounded otherwise.
            for attempt in 1...5 {
                let before = fixture.gateway.statistics.counters(realm: "demo")
                let failuresBefore = UnsettledAccounts.shared.failures
                let connection = try RawHTTPConnection(port: fixture.gatewayApp.port)
                for _ in 0..<requests { #expect(try await Self.get(connection, "/api/x", basicAuthorization("joe", "welcome")) == (200, "joe")) }
                made += requests
                let failed = Int(UnsettledAccounts.shared.failures - failuresBefore)
                let counters = fixture.gateway.statistics.counters(realm: "demo")
                #expect(counters.attempts - before.attempts == requests)
                #expect(counters.successes - before.successes == requests)
                let remembered = counters.remembered - before.remembered
                #expect(remembered <= requests - 1)
                if failed == 0 {
                    #expect(remembered == requests - 1)
                    break
                }
                #expect(remembered >= requests - 1 - failed || attempt < 5)
            }
            let scrape = String(decoding: fixture.gateway.statistics.exposition(), as: UTF8.self)
            #expect(scrape.contains(#"gatehouse_gateway_authentications_total{realm="demo",result="success"} \#(made)"#))
            let remembered = fixture.gateway.statistics.counters(realm: "demo").remembered
            #expect(remembered > 0 && scrape.contains(#"gatehouse_gateway_remembered_admissions_total{realm="demo"} \#(remembered)"#))
        }
    }

    @Test func aLockoutElsewhereReachesAnAdmittedConnection() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let joe = basicAuthorization("joe", "welcome")
            let kept = try RawHTTPConnection(port: fixture.gatewayApp.port)
            #expect(try await Self.get(kept, "/api/x", joe) == (200, "joe"))
            #expect(try await Self.get(kept, "/api/x", joe) == (200, "joe"))
            let other = try RawHTTPConnection(port: fixture.gatewayApp.port)
            for attempt in 0..<3 { #expect(try await Self.get(other, "/api/x", basicAuthorization("joe", "guess\(attempt)")).status == 401) }
            // Locked: the connection that was admitted a moment ago is refused too, and ann is not.
            #expect(try await Self.get(kept, "/api/x", joe).status == 401)
            #expect(try await Self.get(kept, "/api/x", basicAuthorization("ann", "secret")) == (200, "ann"))
        }
    }

    @Test func theMemoryHoldsOnlyWhatTheChainWouldAdmit() async throws {
        let users = UsersLoginModule(users: [GatewayFixture.joe, GatewayFixture.ann], verifiedLifetime: .milliseconds(400))
        let (gateway, api, admin) = try Self.gateway(Self.configuration("http://127.0.0.1:9", modules: [LoginModuleConfiguration(type: "short")]),
                                                     modules: ["short": users])
        let verifiedAt = ContinuousClock.now
        let memory = try #require(await Self.remembered(gateway, api))
        #expect(memory.subject.name == "joe")
        #expect(!memory.admits(Self.joe, to: admin))
        #expect(!memory.admits([.authorization: basicAuthorization("joe", "welcomf")], to: api))
        #expect(!memory.admits([.authorization: basicAuthorization("ann", "secret")], to: api))
        #expect(!memory.admits([:], to: api))
        // It ends with the pair's verified lifetime, whatever else holds.
        #expect(memory.until > verifiedAt && memory.until <= ContinuousClock.now.advanced(by: .milliseconds(400)))
        #expect(!memory.admits(Self.joe, to: api, now: memory.until))
        // A password failing anywhere ends it.
        let store = InMemoryAccountLockouts(policy: AccountLockoutPolicy())
        UnsettledAccounts.shared.failed("user:somebody-else", in: store)
        UnsettledAccounts.shared.settled("user:somebody-else", in: store)
        #expect(!memory.admits(Self.joe, to: api))
        // Once the lifetime is over, the chain does not answer from memory either: bcrypt again, on a task.
        try await Task.sleep(for: .milliseconds(450))
        #expect(gateway.admitNowRemembering(AdmissionRequest(fields: Self.joe, query: nil, service: api, client: ClientIdentity(peer: "127.0.0.1"))) == nil)
    }

    /// A module that answers from memory without being a `users` module: how long its answer holds is unknown.
    struct RoleGranting: LoginModule {
        func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult { .success(Subject(roles: ["EXTRA"])) }
        func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> LoginResult? { .success(Subject(roles: ["EXTRA"])) }
    }

    @Test func onlyRemembersAuthorizationAloneAndUsersModulesAlone() async throws {
        var carriers: [GatewayConfiguration] = []
        for carrier in ["query", "header", "cookie"] {
            var configuration = Self.configuration("http://127.0.0.1:9")
            switch carrier {
            case "query": configuration.realms[0].queryParameters = ["credentials"]
            case "header": configuration.realms[0].headers = ["X-Credentials"]
            default: configuration.realms[0].cookies = ["credentials"]
            }
            carriers.append(configuration)
        }
        for configuration in carriers {
            let (gateway, api, _) = try Self.gateway(configuration)
            guard case .allow = await gateway.admit(AdmissionRequest(fields: Self.joe, query: nil, service: api)) else { Issue.record("joe was not admitted"); continue }
            let now = try #require(gateway.admitNowRemembering(AdmissionRequest(fields: Self.joe, query: nil, service: api, client: ClientIdentity(peer: "127.0.0.1"))))
            guard case .allow = now.admission else { Issue.record("joe was not admitted from memory"); continue }
            #expect(now.remembered == nil)
        }

        // A chain with another module that answers from memory (users first and sufficient, then the other; and
        // users required with the other optional): admitted from memory, never remembered for the connection.
        for flags in [(LoginModuleFlag.required, LoginModuleFlag.optional), (.requisite, .required)] {
            let (gateway, api, _) = try Self.gateway(
                Self.configuration("http://127.0.0.1:9", modules: [
                    LoginModuleConfiguration(type: "users", flag: flags.0, users: [GatewayFixture.joe]),
                    LoginModuleConfiguration(type: "granting", flag: flags.1),
                ]), modules: ["granting": RoleGranting()])
            guard case .allow = await gateway.admit(AdmissionRequest(fields: Self.joe, query: nil, service: api)) else { Issue.record("joe was not admitted"); continue }
            let now = try #require(gateway.admitNowRemembering(AdmissionRequest(fields: Self.joe, query: nil, service: api, client: ClientIdentity(peer: "127.0.0.1"))))
            guard case .allow(let subject) = now.admission else { Issue.record("joe was not admitted from memory"); continue }
            #expect(subject?.roles == ["AUTHORIZED", "EXTRA"])
            #expect(now.remembered == nil)
        }

        // Two users modules, the first sufficient: remembered with the first one's answer alone.
        let (gateway, api, _) = try Self.gateway(Self.configuration("http://127.0.0.1:9", modules: [
            LoginModuleConfiguration(type: "users", flag: .sufficient, users: [GatewayFixture.joe]),
            LoginModuleConfiguration(type: "granting", flag: .required),
        ]), modules: ["granting": RoleGranting()])
        let memory = try #require(await Self.remembered(gateway, api))
        #expect(memory.subject.roles == ["AUTHORIZED"])

        // No verified lifetime: nothing answers from memory at all.
        let unremembering = UsersLoginModule(users: [GatewayFixture.joe], verifiedLifetime: .zero)
        let (plain, plainAPI, _) = try Self.gateway(Self.configuration("http://127.0.0.1:9", modules: [LoginModuleConfiguration(type: "plain")]),
                                                    modules: ["plain": unremembering])
        guard case .allow = await plain.admit(AdmissionRequest(fields: Self.joe, query: nil, service: plainAPI)) else { Issue.record("joe was not admitted"); return }
        #expect(plain.admitNowRemembering(AdmissionRequest(fields: Self.joe, query: nil, service: plainAPI, client: ClientIdentity(peer: "127.0.0.1"))) == nil)
    }
}
