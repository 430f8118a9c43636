import Foundation
import GatehouseChecks
@testable import GatehouseGateway
import HTTPTypes
import Testing

/// A keep-alive connection's `Basic` admission is remembered (``RememberedAdmission``), never beyond what the
/// login chain itself would admit: not for other credentials, another service, after a password failed anywhere,
/// or past the pair's verified lifetime.
@Suite(.timeLimit(.minutes(1))) struct GatewayRememberedAdmissionTests {
    /// A realm that reads `Authorization` alone (no query parameter), as the memory needs.
    static func configuration(_ upstream: String, module: String = "users") -> GatewayConfiguration {
        var configuration = GatewayConfiguration(
            realms: [RealmConfiguration(name: "demo", scheme: .basic, loginModules: [
                LoginModuleConfiguration(type: module, flag: .required, users: module == "users" ? [GatewayFixture.joe, GatewayFixture.ann] : nil),
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

    @Test func oneConnectionIsAnsweredForWhoeverItsCredentialsName() async throws {
        try await GatewayFixture.run({ Self.configuration($0) }) { fixture in
            let connection = try RawHTTPConnection(port: fixture.gatewayApp.port)
            let joe = basicAuthorization("joe", "welcome")
            for _ in 0..<3 { #expect(try await Self.get(connection, "/api/x", joe) == (200, "joe")) }
            // A wrong password of the same length, then another user, on the same connection.
            #expect(try await Self.get(connection, "/api/x", basicAuthorization("joe", "welcomf")).status == 401)
            #expect(try await Self.get(connection, "/api/x", joe) == (200, "joe"))
            #expect(try await Self.get(connection, "/api/x", basicAuthorization("ann", "secret")) == (200, "ann"))
            // Another service with another constraint: ann lacks its role, joe has it.
            #expect(try await Self.get(connection, "/admin/x", basicAuthorization("ann", "secret")).status == 403)
            #expect(try await Self.get(connection, "/admin/x", joe) == (200, "joe"))
            #expect(try await Self.get(connection, "/api/x", "Basic " + Data("joe:welcome ".utf8).base64EncodedString()).status == 401)
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
        let gateway = try Gateway(configuration: Self.configuration("http://127.0.0.1:9", module: "short"), customModules: ["short": users],
                                  logger: GatewayFixture.logger)
        let (api, _) = try #require(gateway.route(try RequestTarget(parsing: "/api/x")))
        let (admin, _) = try #require(gateway.route(try RequestTarget(parsing: "/admin/x")))
        let joe: HTTPFields = [.authorization: basicAuthorization("joe", "welcome")]

        /// A memory of joe's admission that admits him now: verified by the chain (bcrypt), then remembered. A
        /// password failing in another test meanwhile resets it, so a few tries.
        func remembered() async -> RememberedAdmission? {
            for _ in 0..<20 {
                guard case .allow = await gateway.admit(headers: joe, query: nil, to: api),
                      let made = gateway.admitNowRemembering(headers: joe, query: nil, to: api)?.remembered else { continue }
                if made.admits(joe, to: api) { return made }
            }
            return nil
        }

        let memory = try #require(await remembered())
        #expect(memory.subject.name == "joe")
        #expect(!memory.admits(joe, to: admin))
        #expect(!memory.admits([.authorization: basicAuthorization("joe", "welcomf")], to: api))
        #expect(!memory.admits([.authorization: basicAuthorization("ann", "secret")], to: api))
        #expect(!memory.admits([:], to: api))
        // A password failing anywhere ends it.
        UnsettledAccounts.shared.failed("user:somebody-else", in: InMemoryAccountLockouts(policy: AccountLockoutPolicy()))
        #expect(!memory.admits(joe, to: api))

        // So does the end of the pair's verified lifetime, though no password failed since it was made (checked
        // in a moment when no other test failed one).
        var checkedExpiry = false
        for _ in 0..<5 where !checkedExpiry {
            let late = try #require(await remembered())
            try await Task.sleep(for: .milliseconds(450))
            guard UnsettledAccounts.shared.failures == late.failures else { continue }
            #expect(!late.admits(joe, to: api))
            #expect(gateway.admitNowRemembering(headers: joe, query: nil, to: api) == nil)   // bcrypt again, on a task
            checkedExpiry = true
        }
        #expect(checkedExpiry)
    }

    @Test func onlyRealmsReadingAuthorizationAloneAreRemembered() async throws {
        var configuration = Self.configuration("http://127.0.0.1:9")
        configuration.realms[0].queryParameters = ["credentials"]
        let gateway = try Gateway(configuration: configuration, logger: GatewayFixture.logger)
        let (api, _) = try #require(gateway.route(try RequestTarget(parsing: "/api/x")))
        let joe: HTTPFields = [.authorization: basicAuthorization("joe", "welcome")]
        guard case .allow = await gateway.admit(headers: joe, query: nil, to: api) else { Issue.record("joe was not admitted"); return }
        let now = try #require(gateway.admitNowRemembering(headers: joe, query: nil, to: api))
        guard case .allow = now.admission else { Issue.record("joe was not admitted from memory"); return }
        #expect(now.remembered == nil)
    }
}
