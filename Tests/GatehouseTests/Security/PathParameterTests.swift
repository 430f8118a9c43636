import Foundation
import GatehouseGateway
import Testing

/// Hostile input round 2, finding 5: `;` path parameters dodged a stricter gateway service. An open service at `/`
/// and a realm on `/admin`: `/admin;jsessionid=1/secret` was relayed without a challenge, and servlet containers
/// drop the parameter and serve `/admin/secret`.
@Suite(.timeLimit(.minutes(3))) struct PathParameterTests {
    @Test func aPathParameterDoesNotDodgeAStricterService() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("demo", scheme: .basic)],
                services: [ServiceConfiguration(name: "admin", path: "/admin", upstream: upstream, realm: "demo", requireRoles: ["AUTHORIZED"]),
                           ServiceConfiguration(name: "site", path: "/", upstream: upstream)])
        }) { fixture in
            for target in ["/admin;jsessionid=1/secret", "/admin;/secret", "/admin;x", "/admin/secret"] {
                let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: target)
                #expect(answer.status == 401, "\(target)")
            }
            // With the right credentials it goes through; the service's prefix is replaced by the upstream's base path,
            // its parameter with it.
            let admitted = try await RawHTTPConnection.exchange(port: fixture.port, target: "/admin;jsessionid=1/secret",
                                                                headers: ["Authorization: \(basicAuthorization("joe", "welcome"))"])
            #expect(admitted.status == 200)
            #expect(try RecordingUpstream.seen(admitted.body).target == "/secret")
            // A longer name is another segment, not a parameter.
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/administrator").status == 200)
        }
    }
}
