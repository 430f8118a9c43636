import Foundation
import GatehouseProtocol
import Testing

/// `/admin/v1/applications` (issue 38): the versions registrations have, counted with the status in force for each,
/// and an application's version rules replaced live through the policy.
@Suite(.timeLimit(.minutes(3))) struct ApplicationsAdminTests {
    static func put(_ server: TestServer, _ path: String, _ body: String, token: String?) async throws -> TestResponse {
        try await HTTP.send(.PUT, server.baseURL + "/admin/v1/applications/" + path,
                            headers: [("Content-Type", "application/json")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? []),
                            body: Data(body.utf8))
    }

    static func seen(_ server: TestServer, token: String) async throws -> [JSON] {
        let answer = try await Admin.send(.GET, server, "/applications", token: token)
        let app = answer.json?["applications"]?.arrayValue?.first { $0["id"] == "com.sample.pincodeswift" && $0["platform"] == "ios" }
        return app?["seen"]?.arrayValue ?? []
    }

    @Test func versionsSeenAreCountedAndARuleReplacedLiveDisablesOne() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            let reader = try await Admin.reader(server)
            for version in ["1.0", "1.0", "2.1"] {
                var client = try ProtocolClient(server, version: version)
                try await client.register()
            }
            #expect(try await Self.seen(server, token: reader) == [
                ["version": "1.0", "registrations": 2, "status": "active"], ["version": "2.1", "registrations": 1, "status": "active"],
            ])
            let rules = #"{"versions":[{"versions":"< 2.0","status":"disabled","message":"Please upgrade.","downloadLink":"https://apps.example.com"},{"versions":"2.1","status":"notify","message":"Hello","messages":{"de":"Hallo"}}]}"#
            // Readers may not, an unknown application is 404, a wrong rule 422 naming it; nothing changed by those.
            #expect(try await Self.put(server, "com.sample.pincodeswift/ios/versions", rules, token: reader).status == 403)
            #expect(try await Self.put(server, "com.nothing/ios/versions", rules, token: writer).status == 404)
            #expect(try await Self.put(server, "com.sample.pincodeswift/ios/versions", #"{"versions":[{"status":"paused","message":"m"}]}"#, token: writer).status == 422)
            #expect(try await Self.put(server, "com.sample.pincodeswift/ios/versions", #"{"versions":[{"status":7}]}"#, token: writer).status == 400)
            #expect(try await Self.put(server, "com.sample.pincodeswift/ios/versions", "not json", token: writer).status == 400)
            let applied = try await Self.put(server, "com.sample.pincodeswift/ios/versions", rules, token: writer)
            #expect(applied.status == 200 && applied.json?["applied"] == true, "\(String(decoding: applied.body, as: UTF8.self))")
            #expect(try await Self.seen(server, token: reader).map { $0["status"] } == ["disabled", "notify"])
            // In force at once: a 1.0 client is refused, with the rule's message and link.
            var old = try ProtocolClient(server, version: "1.0")
            try await old.register()
            let refused = try await old.preauthorize(scope: "accessRestricted")
            #expect(refused.status == 403 && refused.json?["failures"]?["wl_remoteDisableRealm"]?["downloadLink"] == "https://apps.example.com")
            // The rest of the policy is as it was (other applications, checks, clients).
            let policy = try await Admin.send(.GET, server, "/policy", token: reader)
            #expect(policy.json?["applications"]?.arrayValue?.count == 5)
            #expect(policy.json?["confidentialClients"]?.arrayValue?.contains { $0["id"] == "ops" } == true)
            // An empty list lifts every rule.
            #expect(try await Self.put(server, "com.sample.pincodeswift/ios/versions", #"{"versions":[]}"#, token: writer).status == 200)
            #expect(try await old.preauthorize(scope: "accessRestricted").status == 401)
        }
    }
}
