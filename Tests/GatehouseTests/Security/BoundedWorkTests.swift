import Foundation
import GatehouseChecks
import GatehouseGateway
import GatehouseProtocol
import Testing

/// Hostile input round 2, finding 2: no read-only request makes the process do unbounded work. A policy sent to
/// `POST /admin/v1/policy/validate` (scope `gatehouse.admin.read`) with a user hash of bcrypt cost 31 built a decoy at
/// that cost on the request's thread: after four such requests `/health` did not answer for 10 s and more.
@Suite(.timeLimit(.minutes(3))) struct BoundedWorkTests {
    /// A well-formed bcrypt hash of `cost` (its digest is not of any password: only its cost matters here).
    static func hash(cost: Int) -> String {
        "$2b$" + (cost < 10 ? "0" : "") + String(cost) + "$" + "axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2"
    }

    @Test func aCostOverTheCapIsRefusedAtOnceAndTheServerKeepsAnswering() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let hostile = Admin.policy.replacingOccurrences(of: "\nusers:\n", with: "\nusers:\n  - { username: slow, passwordHash: \"\(Self.hash(cost: 31))\" }\n")
            #expect(hostile != Admin.policy)
            let start = ContinuousClock.now
            for _ in 0..<4 {
                let answer = try await PolicyValidationTests.validate(server, hostile, token: reader)
                #expect(answer.status == 200 && answer.json?["valid"] == false)
                let problem = answer.json?["errors"]?.arrayValue?.first?["problem"]?.stringValue ?? ""
                #expect(problem.contains("cost 31") && problem.contains("15"), "\(problem)")
            }
            #expect(try await HTTP.send(.GET, server.baseURL + "/health").status == 200)
            // Cost 31 ran for days; a refused hash's cost is never a decoy's.
            #expect(ContinuousClock.now - start < .seconds(5))
        }
    }

    @Test func theCapIsTheSameForConfidentialClientsAndTheGatewaysUsers() throws {
        #expect(PasswordVerifier.costProblem(of: Self.hash(cost: 15)) == nil)
        #expect(PasswordVerifier.costProblem(of: Self.hash(cost: 16)) != nil)
        let yaml = """
            realms: [{ name: r, scheme: Basic, loginModules: [{ type: users, flag: required, users: [{ username: joe, passwordHash: "\(Self.hash(cost: 20))", roles: [A] }] }] }]
            services: [{ name: s, path: /s, upstream: "http://127.0.0.1:1", realm: r }]
            """
        #expect(throws: GatewayConfigurationError.self) { try Gateway(configuration: try GatewayConfiguration.decode(yaml: yaml)) }
    }
}
