import Foundation
import GatehouseChecks
import GatehouseGateway
import Testing

/// Hostile input round 2, finding 3 (in part): unauthenticated requests each cost a bcrypt run in an unbounded queue
/// (~100 `Basic <unknown>:<random>` token requests took a real user's login from 0.10 s to 4.3 s). The runs waiting
/// are now bounded: past the bound a request is answered `503` with `Retry-After` at once, never a `500`, and never
/// counted as a wrong secret.
@Suite(.timeLimit(.minutes(3))) struct BcryptFloodTests {
    /// A flood from many addresses (here all from this machine, with the throttle by source off: one address's
    /// flood is that throttle's, ``SourceThrottleTests``).
    @Test func aFloodOfUnknownClientsIsRefusedWith503AndTheServerRecovers() async throws {
        try await TestServer.run(policy: Admin.policy + "\nsourceThrottle: { threshold: 0 }\n") { server in
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<400 {
                    group.addTask {
                        let answer = try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/token", [("grant_type", "client_credentials"), ("scope", "x")],
                                                             headers: [("Authorization", "Basic " + Data("intruder-\(index):\(UUID().uuidString)".utf8).base64EncodedString())])
                        return (answer.status, answer.header("Retry-After"))
                    }
                }
                var all: [(Int, String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            let busy = statuses.filter { $0.0 == 503 }
            #expect(!busy.isEmpty, "no request was refused: \(Dictionary(grouping: statuses, by: \.0).mapValues(\.count))")
            #expect(busy.allSatisfy { $0.1 == "1" })
            #expect(statuses.allSatisfy { $0.0 == 401 || $0.0 == 503 }, "\(Dictionary(grouping: statuses, by: \.0).mapValues(\.count))")
            // Afterwards the real client gets its token.
            _ = try await Admin.reader(server)
        }
    }

    /// The gateway alike: past the bound a `Basic` request is answered `503` with `Retry-After` (it was answered with
    /// the realm's challenge, which a client takes for a wrong password), never counted as a failure; then joe gets in.
    @Test func theGatewayAnswersAFloodOfPasswordChecks503() async throws {
        let joe = GatewayUser.hashing(username: "joe", password: "welcome", roles: ["AUTHORIZED"], cost: 10)
        let realm = RealmConfiguration(name: "demo", description: "Demo Realm", scheme: .basic,
                                       loginModules: [LoginModuleConfiguration(type: "users", flag: .required, users: [joe])])
        try await GatewayFixture.run({ upstream in
            var configuration = GatewayConfiguration(realms: [realm], services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo")])
            configuration.sourceThrottle = AccountLockoutSettings(threshold: 0)   // many addresses' flood: one address's is GatewaySourceThrottleTests'
            return configuration
        }) { fixture in
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<400 {
                    group.addTask {
                        let answer = try await fixture.get("/echo/flood", headers: [("Authorization", basicAuthorization("intruder-\(index)", UUID().uuidString))])
                        return (answer.status, answer.header("Retry-After"))
                    }
                }
                var all: [(Int, String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            let counts = Dictionary(grouping: statuses, by: \.0).mapValues(\.count)
            let busy = statuses.filter { $0.0 == 503 }
            #expect(!busy.isEmpty, "no request was refused: \(counts)")
            #expect(busy.allSatisfy { $0.1 == "1" })
            #expect(statuses.allSatisfy { $0.0 == 401 || $0.0 == 503 }, "\(counts)")
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            #expect(counters.unavailable == busy.count)
            #expect(counters.failures == statuses.count - busy.count, "a refused check is never a wrong password")
            #expect(try await fixture.get("/echo/after", headers: [("Authorization", basicAuthorization("joe", "welcome"))]).status == 200)
        }
    }
}
