import Foundation
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// Introspection answers a token's client (`mfp-device`, `mfp-user`) from a node's memory for a moment instead of
/// reading the store at every request, and a change stored through this node shows in the next answer.
@Suite(.timeLimit(.minutes(3))) struct IntrospectionTests {
    /// The test policy with a user login that holds for a minute (the standard one's holds for a second).
    static let policy = TestPolicies.standard.replacingOccurrences(
        of: "properties: { maxAttempts: 3, successStateExpirationSec: 1, rememberMeDurationSec: 60 }",
        with: "properties: { maxAttempts: 3, successStateExpirationSec: 60, rememberMeDurationSec: 60 }")

    static func storeReads(_ server: TestServer) async throws -> Double {
        let text = String(decoding: try await HTTP.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
        return MetricsTests.samples(text)[#"gatehouse_store_operation_duration_seconds_count{operation="storedClient"}"#] ?? 0
    }

    @Test(.timeLimit(.minutes(3))) func answersAreKeptForAMomentAndFollowThisNodesChangesAtOnce() async throws {
        #expect(Self.policy != TestPolicies.standard, "the policy's user login holds for a minute")
        try await TestServer.run(policy: Self.policy) { server in
            let api = server.baseURL + "/mfp/api"
            let basic = ("Authorization", "Basic " + Data("balance-service:s3cret".utf8).base64EncodedString())
            var client = try ProtocolClient(server)
            try await client.register()
            let login = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo"]])
            #expect(login.status == 200)
            let token = try await client.obtainToken(scope: "UserLogin").access_token
            func introspect() async throws -> JSON? {
                try await HTTP.postForm(api + "/az/v1/introspection", [("token", token)], headers: [basic]).json
            }

            let first = try #require(try await introspect())
            #expect(first["active"] == true)
            #expect(first["mfp-user"]?["id"] == "john")
            #expect(first["mfp-user"]?["attributes"]?["country"] == "DE")
            #expect(first["mfp-device"]?["id"] == "device-com.sample.pincodeswift")
            #expect(first["mfp-device"]?["deviceDisplayName"] == .null)

            // Ten more answers, the same, read from the store at most once per lifetime (2 s) of a kept answer.
            let before = try await Self.storeReads(server)
            let start = ContinuousClock.now
            for _ in 0..<10 { #expect(try await introspect() == first) }
            let elapsed = (ContinuousClock.now - start) / .seconds(1)
            let reads = try await Self.storeReads(server) - before
            #expect(reads <= (elapsed / 2).rounded(.down) + 1, "\(reads) store reads for 10 introspections in \(elapsed) s")

            // A registration update through this node shows at once.
            let id = try #require(client.clientID)
            var data = client.registrationData()
            data.device.deviceDisplayName = "Anna's phone"
            let update = try await HTTP.send(.PUT, api + "/registration/v1/self/\(id)", headers: [("Content-Type", "application/json")],
                                             body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: client.key, kid: id))))
            #expect(update.status == 200)
            #expect(try await introspect()?["mfp-device"]?["deviceDisplayName"] == "Anna's phone")

            // A logout through this node: the token is revoked, and the client's active user is gone at once.
            #expect(try await client.logout(securityCheck: "UserLogin").status == 200)
            #expect(try await introspect() == ["active": false])
        }
    }

    /// A read that a forget of its client overtook (a round committed while introspection read the store) is
    /// answered, not kept: the next introspection reads again.
    @Test(.timeLimit(.minutes(3))) func aReadOvertakenByAForgetIsNotKept() async throws {
        let clients = IntrospectedClients()
        let old = IntrospectedClients.Client(device: ["deviceDisplayName": "old"], activeUser: nil)
        let new = IntrospectedClients.Client(device: ["deviceDisplayName": "new"], activeUser: nil)
        var reads = 0
        let first = try await clients.client("c1", now: 1000) {
            reads += 1
            clients.forget("c1")   // the change lands while the store is being read
            return old
        }
        #expect(first?.device == old.device)
        let second = try await clients.client("c1", now: 1001) {
            reads += 1
            return new
        }
        #expect(second?.device == new.device)
        #expect(reads == 2)
        // Kept now: the next answer within the lifetime needs no read; after it, one.
        #expect(try await clients.client("c1", now: 1002) { reads += 1; return old }?.device == new.device)
        #expect(try await clients.client("c1", now: 1001 + clients.lifetime) { reads += 1; return old }?.device == old.device)
        #expect(reads == 3)
    }
}
