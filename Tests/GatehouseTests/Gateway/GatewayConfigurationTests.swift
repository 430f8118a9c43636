import Foundation
import GatehouseGateway
import Testing

/// The gateway's YAML: a key it does not know is refused with its place, never ignored — a service whose `realm:`
/// is misspelt would otherwise be served open, one whose `requireRoles:` is misspelt to any user.
@Suite(.timeLimit(.minutes(3))) struct GatewayConfigurationTests {
    static let hash = "$2b$04$" + String(repeating: "a", count: 53)

    static func yaml(service: String, module: String = "{ type: users, flag: required, users: [{ username: joe, passwordHash: \"\(hash)\", roles: [A] }] }") -> String {
        """
        realms:
          - { name: demo, scheme: Basic, loginModules: [\(module)] }
        services:
          - \(service)
        """
    }

    func refusal(_ yaml: String) -> String? {
        do {
            _ = try Gateway(configuration: GatewayConfiguration.decode(yaml: yaml))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func theSpelledConfigurationIsAccepted() {
        #expect(refusal(Self.yaml(service: "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9/echo\", realm: demo, requireRoles: [A] }")) == nil)
    }

    @Test func aDecodingErrorNamesItsPlaceInWords() throws {
        let flag = try #require(refusal("realms:\n  - { name: demo, scheme: Basic, loginModules: [{ type: users }] }\n"))
        #expect(flag == "'realms[0].loginModules[0].flag' is required", "\(flag)")
        let port = try #require(refusal("port: eighty\n"))
        #expect(port == "'port' must be an integer", "\(port)")
        let scheme = try #require(refusal("realms:\n  - { name: demo, scheme: Basik, loginModules: [] }\n"))
        #expect(scheme.hasPrefix("'realms[0].scheme' must be one of Basic, Application Basic,") && scheme.hasSuffix("not 'Basik'"), "\(scheme)")
    }

    @Test func aMisspeltKeyIsRefusedWithItsPlace() throws {
        let relm = try #require(refusal(Self.yaml(service: "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9\", relm: demo }")))
        #expect(relm.contains("'services[0].relm'") && relm.contains("realm"), "\(relm)")
        let roles = try #require(refusal(Self.yaml(service: "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9\", realm: demo, requiredRoles: [A] }")))
        #expect(roles.contains("'services[0].requiredRoles'") && roles.contains("requireRoles"), "\(roles)")
        let module = try #require(refusal(Self.yaml(service: "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9\", realm: demo }",
                                                    module: "{ type: users, flag: required, users: [{ username: joe, password: secret }] }")))
        #expect(module.contains("'realms[0].loginModules[0].users[0].password'"), "\(module)")
        let top = try #require(refusal("port: 0\nidle_timeout: 5\n"))
        #expect(top.contains("'idle_timeout'") && top.contains("idleTimeout"), "\(top)")
        // Names of the operator's own (principals) are free.
        #expect(refusal(Self.yaml(service: "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9\", realm: demo }",
                                  module: "{ type: kerberos5, flag: required, principalRoles: { \"alice@EXAMPLE.COM\": [A] } }"))?.contains("not a key") != true)
    }

    @Test func aUsersFileIsCheckedLikeTheConfiguration() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-users-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = "{ name: echo, path: /echo, upstream: \"http://127.0.0.1:9\", realm: demo }"
        let missing = try #require(refusal(Self.yaml(service: service, module: "{ type: users, flag: required, usersFile: \"\(directory.path)/none.yaml\" }")))
        #expect(missing.contains("usersFile") && missing.contains("cannot be read") && !missing.contains("NSCocoaErrorDomain"), "\(missing)")
        let file = directory.appendingPathComponent("users.yaml").path
        try "- { username: joe, passwordHash: \"\(Self.hash)\", role: [A] }\n".write(toFile: file, atomically: true, encoding: .utf8)
        let misspelt = try #require(refusal(Self.yaml(service: service, module: "{ type: users, flag: required, usersFile: \"\(file)\" }")))
        #expect(misspelt.contains("'[0].role'"), "\(misspelt)")
        try "- { username: joe, passwordHash: \"$2b$12$...\", roles: [A] }\n".write(toFile: file, atomically: true, encoding: .utf8)
        let placeholder = try #require(refusal(Self.yaml(service: service, module: "{ type: users, flag: required, usersFile: \"\(file)\" }")))
        #expect(placeholder.contains("joe") && placeholder.contains("bcrypt"), "\(placeholder)")
    }

    @Test func mergeKeysAreReadAsTheDecoderReadsThem() throws {
        // YAML's merge key brings a mapping's keys in: accepted as the decoder takes them, and checked like them.
        let base = "{ type: users, flag: required, users: [{ username: joe, passwordHash: \"\(Self.hash)\", roles: [A] }] }"
        let merged = """
            realms:
              - { name: demo, scheme: Basic, loginModules: [\(base)] }
            services:
              - &echo { name: echo, path: /echo, upstream: "http://127.0.0.1:9", realm: demo }
              - { <<: *echo, name: other, path: /other }
            """
        #expect(refusal(merged) == nil)
        let misspelt = merged.replacingOccurrences(of: "realm: demo }\n  - { <<: *echo", with: "relm: demo }\n  - { <<: *echo")
        let refused = try #require(refusal(misspelt))
        #expect(refused.contains("relm"), "\(refused)")
    }
}
