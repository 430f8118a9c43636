import Foundation
import GatehouseProtocol
import Testing

/// A new policy is checked through the admin API as a start would check it: the problem by file and key.
@Suite(.timeLimit(.minutes(3))) struct PolicyValidationTests {
    static func validate(_ server: TestServer, _ yaml: String, token: String?) async throws -> TestResponse {
        try await HTTP.send(.POST, server.baseURL + "/admin/v1/policy/validate",
                            headers: [("Content-Type", "application/yaml")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? []),
                            body: Data(yaml.utf8))
    }

    @Test(.timeLimit(.minutes(3))) func aPolicyIsValidatedWithItsProblemByKey() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let good = try await Self.validate(server, Admin.policy, token: reader)
            #expect(good.status == 200 && good.json?["valid"] == true && good.json?["errors"] == .array([]))

            let wrongMapping = """
                securityChecks: { Pin: { class: PinCodeAttempts, properties: { pinCode: "1" } } }
                applications:
                  - { id: a, platform: ios, scopeElementMapping: { x: Missing } }
                """
            let bad = try await Self.validate(server, wrongMapping, token: reader)
            #expect(bad.status == 200 && bad.json?["valid"] == false)
            let error = bad.json?["errors"]?.arrayValue?.first
            #expect(error?["file"] == "policy.yaml")
            #expect(error?["key"] == "applications[0].scopeElementMapping.x")
            #expect(error?["problem"]?.stringValue?.contains("Missing") == true)

            let unknownClass = try await Self.validate(server, "securityChecks: { C: { class: Nope } }\napplications: [{ id: a, platform: ios }]", token: reader)
            #expect(unknownClass.json?["valid"] == false && unknownClass.json?["errors"]?.arrayValue?.first?["key"]?.stringValue?.hasPrefix("securityChecks.C") == true)
            let notYAML = try await Self.validate(server, "applications: [", token: reader)
            #expect(notYAML.status == 200 && notYAML.json?["valid"] == false)

            #expect(try await Self.validate(server, Admin.policy, token: nil).status == 401)
            let other = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
            #expect(try await Self.validate(server, Admin.policy, token: other).status == 403)
        }
    }
}
