import ExampleChecks
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// Policy files: a wrong one names the file, the key and the problem; custom checks plug in.
@Suite(.timeLimit(.minutes(3))) struct PolicyTests {
    struct NoUsers: UserDirectory {
        func user(named username: String) async throws -> UserRecord? { nil }
    }

    func parse(_ yaml: String, registry: SecurityCheckRegistry = .builtIn) throws -> SecurityPolicy {
        try SecurityPolicy.parse(yaml: yaml, file: "policy.yaml", registry: registry, services: SecurityCheckServices(users: NoUsers()))
    }

    func expectError(_ yaml: String, key: String, containing text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try parse(yaml)
            Issue.record("policy was accepted", sourceLocation: sourceLocation)
        } catch let error as PolicyError {
            #expect(error.file == "policy.yaml", sourceLocation: sourceLocation)
            #expect(error.key == key, sourceLocation: sourceLocation)
            #expect(error.problem.contains(text), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func wrongPoliciesNameTheKeyAndTheProblem() {
        let check = "securityChecks: { Pin: { class: PinCodeAttempts } }\n"
        expectError("applications: []", key: "applications", containing: "at least one")
        expectError("applications: [{ id: a }]", key: "applications[0].platform", containing: "required")
        expectError(check + "applications: [{ id: a, platform: ios, maxTokenExpiration: soon }]", key: "applications[0].maxTokenExpiration", containing: "integer")
        expectError("securityChecks: { Pin: { class: NoSuchClass } }\napplications: [{ id: a, platform: ios }]",
                    key: "securityChecks.Pin.class", containing: "unknown check class")
        expectError(check + "applications: [{ id: a, platform: ios, scopeElementMapping: { x: Missing } }]",
                    key: "applications[0].scopeElementMapping.x", containing: "Missing")
        expectError("securityChecks: { Pin: { class: PinCodeAttempts, properties: { maxAttempts: many } } }\napplications: [{ id: a, platform: ios }]",
                    key: "securityChecks.Pin.properties.maxAttempts", containing: "integer")
        expectError("securityChecks: { Pin: { class: PinCodeAttempts, properties: { maxAttempts: 0 } } }\napplications: [{ id: a, platform: ios }]",
                    key: "securityChecks.Pin.properties.maxAttempts", containing: "between")
        expectError(check + "applications: [{ id: a, platform: ios, securityCheckConfigurations: { Pin: { maxAttempts: -1 } } }]",
                    key: "applications[0].securityCheckConfigurations.Pin.maxAttempts", containing: "between")
        expectError(check + "applications: [{ id: a, platform: ios }]\nusers: [{ username: u, passwordHash: plain }]",
                    key: "users[0].passwordHash", containing: "bcrypt")
        expectError("applications: [ { id: a, platform: ios ]", key: "", containing: "YAML")
    }

    @Test func configurationLayersAndWarnings() throws {
        let policy = try parse("""
            securityChecks: { Pin: { class: PinCodeAttempts, properties: { maxAttempts: 5, colour: blue } } }
            applications:
              - { id: a, platform: ios, securityCheckConfigurations: { Pin: { maxAttempts: "2" } } }
              - { id: b, platform: ios }
            """)
        let a = try #require(policy.applications.first { $0.id == "a" }?.checks["Pin"] as? PinCodeAttempts)
        let b = try #require(policy.applications.first { $0.id == "b" }?.checks["Pin"] as? PinCodeAttempts)
        #expect(a.validation.maxAttempts == 2)
        #expect(b.validation.maxAttempts == 5)
        #expect(b.validation.successStateExpirationSec == 3600)
        #expect(policy.warnings.contains { $0.contains("colour") && $0.contains("unknown property") })
    }

    @Test func theDemoPolicyIsValid() throws {
        let policy = try parse(DemoPolicy.yaml)
        #expect(Set(policy.applications.map(\.id)) == ["com.sample.pincodeswift", "com.sample.simplecaptcha", "com.sample.web"])
        #expect(policy.applications.allSatisfy { $0.scopeElementMapping["accessRestricted"] == ["PinCodeAttempts"] })
        #expect(policy.warnings.isEmpty, "\(policy.warnings)")
    }

    @Test func aCustomCheckWrittenOutsideThePackageRuns() async throws {
        var registry = SecurityCheckRegistry.builtIn
        registry.register("AcceptTerms") { name, properties, _ in AcceptTerms(name: name, properties: &properties) }
        let policy = """
            securityChecks:
              Terms: { class: AcceptTerms, properties: { version: "2026-11", text: "Be nice." } }
            applications:
              - { id: com.sample.pincodeswift, platform: ios, scopeElementMapping: { termsAccepted: Terms } }
            """
        try await TestServer.run(policy: policy, registry: registry) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let challenge = try await client.preauthorize(scope: "termsAccepted")
            #expect(challenge.json?["challenges"]?["Terms"] == ["terms": "Be nice.", "version": "2026-11"])
            let declined = try await client.preauthorize(scope: "termsAccepted", answers: ["Terms": ["accept": "2020-01"]])
            #expect(declined.status == 401)
            let accepted = try await client.preauthorize(scope: "termsAccepted", answers: ["Terms": ["accept": "2026-11"]])
            #expect(accepted.status == 200)
            let start = Date()
            let token = try await client.obtainToken(scope: "termsAccepted")
            #expect(token.scope == "RegisteredClient termsAccepted")
            // The check grants a day; the application caps tokens at an hour.
            TokenTests.expectLifetime(token, 3600, since: start)
        }
    }
}
