import ExampleChecks
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import GatehouseStore
import HummingbirdBcrypt
import Logging
import GatehouseSQLite
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
        expectError(" \n", key: "", containing: "is empty")
        expectError("# only a comment\n", key: "", containing: "is empty")
        expectError("---\n# applications: to come\n", key: "", containing: "is empty")
    }

    @Test func aMisspeltKeyIsRefusedWhereItStands() {
        // Each of these would otherwise be a setting silently left out (the decoder ignores keys it does not know).
        let check = "securityChecks: { Pin: { class: PinCodeAttempts } }\n"
        let app = "applications: [{ id: a, platform: ios }]\n"
        expectError(check + app + "registrationThrotle: { perAddress: 5 }", key: "registrationThrotle", containing: "registrationThrottle")
        expectError(check + "applications: [{ id: a, platform: ios, mandatoryscope: Pin }]", key: "applications[0].mandatoryscope",
                    containing: "mandatoryScope")
        expectError(check + app + "accountLockout: { treshold: 3 }", key: "accountLockout.treshold", containing: "threshold")
        expectError("securityChecks: { Pin: { class: PinCodeAttempts, propertes: { maxAttempts: 1 } } }\n" + app,
                    key: "securityChecks.Pin.propertes", containing: "properties")
        let hash = "$2b$04$" + String(repeating: "a", count: 53)
        expectError(check + app + "users: [{ username: u, passwordhash: \"\(hash)\" }]", key: "users[0].passwordhash", containing: "passwordHash")
        // Check properties stay the checks' own business: an unknown one is a warning, not an error.
        #expect(throws: Never.self) { try parse("securityChecks: { Pin: { class: PinCodeAttempts, properties: { colour: red } } }\n" + app) }
    }

    @Test func aHashMustBeAWholeBcryptHash() throws {
        let check = "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications: [{ id: a, platform: ios }]\n"
        let whole = "$2b$04$" + String(repeating: "a", count: 53)
        for broken in ["$2b$12$...", String(whole.dropLast()), whole + "a", "$2b$03$" + String(repeating: "a", count: 53),
                       "$2q$04$" + String(repeating: "a", count: 53), "$2b$04$" + String(repeating: "a", count: 52) + "!",
                       "$2x$04$" + String(repeating: "a", count: 53), "$2b$+9$" + String(repeating: "a", count: 53)] {
            expectError(check + "users: [{ username: u, passwordHash: \"\(broken)\" }]", key: "users[0].passwordHash", containing: "bcrypt")
            expectError(check + "confidentialClients: [{ id: c, secretHash: \"\(broken)\", allowedScope: x }]",
                        key: "confidentialClients[0].secretHash", containing: "bcrypt")
        }
        let policy = try parse(check + "users: [{ username: u, passwordHash: \"\(whole)\" }]")
        #expect(policy.users.map(\.username) == ["u"])
        // PHP's and htpasswd's `$2y$` is bcrypt's `$2b$`: accepted, and kept as the library verifies it.
        let made = Bcrypt.hash("pass", cost: 4)
        let php = "$2y$" + made.dropFirst(4)
        let fromPHP = try parse(check + "users: [{ username: u, passwordHash: \"\(php)\" }]")
        #expect(fromPHP.users.first?.passwordHash == made)
        #expect(Bcrypt.verify("pass", hash: try #require(fromPHP.users.first?.passwordHash)))
    }

    @Test func aYAMLSyntaxErrorSaysWhere() {
        expectError("applications:\n  - id: a\n    platform: [ios\n", key: "", containing: "line")
    }

    @Test func aPolicyKeepingTheDemosSecretsServesOnLoopbackOnly() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/policy.yaml"
        try DemoPolicy.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .critical
        func service(host: String) async throws {
            var configuration = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: directory))
            configuration.policyPath = path
            configuration.host = host
            _ = try await Gatehouse.makeService(configuration, logger: logger)
        }
        try await service(host: "127.0.0.1")
        do {
            try await service(host: "0.0.0.0")
            Issue.record("the demo's published secrets were served beyond loopback")
        } catch let error as PolicyError {
            #expect(error.problem.contains("confidential client demo-admin") && error.problem.contains("user john"), "\(error)")
        }
        // The demo policy itself: on loopback only.
        var demo = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: directory))
        demo.host = "0.0.0.0"
        await #expect(throws: PolicyError.self) { _ = try await Gatehouse.makeService(demo, logger: logger) }
        demo.host = "localhost"
        _ = try await Gatehouse.makeService(demo, logger: logger)
        // Secrets of the operator's own: served anywhere.
        let own = DemoPolicy.yaml.replacingOccurrences(of: "$2b$10$W.xZxV61Xq4QEsXSpYnbte5.dTX4KAgfcO.MU9cZ7ENdW8ZDBLW6a",
                                                      with: "$2b$04$" + String(repeating: "a", count: 53))
            .replacingOccurrences(of: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu", with: "$2b$04$" + String(repeating: "b", count: 53))
            .replacingOccurrences(of: "$2b$10$cp.GD18nLJYUpKhqQUjHDuv.HN1zI1IyIZAt5Ceoh1EC8keY8qaua", with: "$2b$04$" + String(repeating: "c", count: 53))
        try own.write(toFile: path, atomically: true, encoding: .utf8)
        try await service(host: "0.0.0.0")
    }

    @Test func aStoredPolicyWithAKeyNotKnownRunsWithAWarning() async throws {
        // Applied before keys were checked: it still runs after an upgrade (refusing it would put the file's or the
        // demo's policy in force instead), the unknown key a warning.
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore.open(dataDirectory: directory)
        let yaml = "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications: [{ id: a, platform: ios, colour: red }]\n"
        try await store.insertPolicy(StoredPolicy(version: 7, yaml: yaml, appliedAt: 1, actor: "ops"))
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .critical
        let service = try await Gatehouse.makeService(ServerConfiguration(store: store), logger: logger)
        #expect(service.policies.current.version == 7)
        #expect(service.policies.current.policy.warnings.contains { $0.contains("applications[0].colour") && $0.contains("ignored") })
        // The same text sent anew is refused.
        expectError(yaml, key: "applications[0].colour", containing: "not a policy key")
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
