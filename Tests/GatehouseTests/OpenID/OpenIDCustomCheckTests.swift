import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// A check of one's own on the hosted page: the page contract's `message` and `fields` (docs/openid-connect.md), its
/// kind (the check's type), the answer handed to the check as the page sends it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OpenIDCustomCheckTests {
    /// The docs' example: a PIN from a letter, after the login.
    struct LetterPIN: CredentialsValidationSecurityCheck {
        let name: String
        let validation: CredentialsValidationConfiguration

        init(name: String, properties: inout SecurityCheckProperties) {
            self.name = name
            validation = CredentialsValidationConfiguration(properties: &properties, defaults: .init(maxAttempts: 3, successStateExpirationSec: 600))
        }

        func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
            credentials["pin"]?.stringValue == "8472" && credentials["count"]?.intValue == 3
        }

        func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
            ["message": "Enter the PIN from your letter",
             "fields": [["name": "pin", "label": "PIN", "type": "password"], ["name": "count", "label": "Count", "type": "number"]]]
        }
    }

    @Test("a custom check mapped to openid is asked with its message and fields, answered as the page sends the fields, and signs in")
    func customCheck() async throws {
        var registry = SecurityCheckRegistry.builtIn
        registry.register("LetterPIN") { name, properties, _ in LetterPIN(name: name, properties: &properties) }
        let policy = OpenIDFixture.policy
            .replacingOccurrences(of: "securityChecks:\n", with: "securityChecks:\n  Letter:\n    class: LetterPIN\n    requires: [UserLogin]\n")
            .replacingOccurrences(of: "  - id: narrow\n", with: "  - id: letter\n    secretHash: \"$2b$04$cVF60iQ6vK9WE5LymdZzuuJfMhNAQw6YLJoJcwAZu1NCY5F/www1K\"\n"
                + "    redirectURIs: [\"\(OpenIDFixture.redirect)\"]\n    scopeElementMapping: { openid: \"UserLogin Letter\" }\n  - id: narrow\n")
        try await TestServer.run(policy: policy, registry: registry) { server in
            let op = OpenIDFixture(server: server)
            let browser = TestBrowser(op)
            #expect(try await browser.authorize(OpenIDFixture.parameters(client: "letter")).status == 200)
            let login = try await browser.round(["UserLogin": ["username": "john", "password": "demo"]])
            let asked = try #require(login.json?["challenges"]?["Letter"])
            #expect(asked["kind"]?.stringValue == "LetterPIN")
            #expect(asked["challenge"]?["message"]?.stringValue == "Enter the PIN from your letter")
            #expect(asked["challenge"]?["fields"]?.arrayValue?.count == 2)
            let wrong = try await browser.round(["Letter": ["pin": "0000", "count": 3]])
            #expect(wrong.json?["challenges"]?["Letter"]?["challenge"]?["fields"] != nil)   // asked again
            let done = try await browser.round(["Letter": ["pin": "8472", "count": 3]])
            let redirect = try #require(done.json?["redirect"]?.stringValue.flatMap(URLComponents.init(string:)))
            let code = try #require(redirect.parameter("code"))
            let token = try await op.verifiedIDToken(try await op.exchange(code, basic: ("letter", OpenIDFixture.secret))).token
            #expect(token.sub == "john" && token.aud == "letter")
        }
    }
}

/// OpenID clients registered by an operator through the admin API (a policy applied live), and gone the same way.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OpenIDAdminTests {
    @Test("a policy applied through the admin API adds an OpenID client at once; a policy without it removes it")
    func clientsByTheAdminAPI() async throws {
        let withoutClients = Admin.policy.replacingOccurrences(
            of: "users:\n", with: "users:\n  - { username: jane, displayName: Jane, passwordHash: \"$2b$04$sgAASYgFb4AZKl/vIQClWesqgsJQy2KQVrogNNikfxIwtWl2QMXHa\" }\n")
        try await TestServer.run(policy: withoutClients) { server in
            let op = OpenIDFixture(server: server)
            let token = try await Admin.writer(server)
            let unknown = try await TestBrowser(op).authorize(OpenIDFixture.parameters(client: "added"))
            #expect(unknown.status == 400)
            let withClient = withoutClients + """

                openIDClients:
                  - { id: added, secretHash: "$2b$04$cVF60iQ6vK9WE5LymdZzuuJfMhNAQw6YLJoJcwAZu1NCY5F/www1K", redirectURIs: ["\(OpenIDFixture.redirect)"], scopeElementMapping: { openid: UserLogin } }
                """
            let applied = try await HTTP.send(.PUT, server.baseURL + "/admin/v1/policy",
                                              headers: [("Content-Type", "application/yaml"), ("Authorization", "Bearer \(token)")], body: Data(withClient.utf8))
            #expect(applied.status == 200, "\(String(decoding: applied.body, as: UTF8.self))")
            let browser = TestBrowser(op)
            #expect(try await browser.authorize(OpenIDFixture.parameters(client: "added")).status == 200)
            let done = try await browser.round(["UserLogin": ["username": "jane", "password": "demo"]])
            let code = try #require(done.json?["redirect"]?.stringValue.flatMap(URLComponents.init(string:))?.parameter("code"))
            let tokens = try await op.exchange(code, basic: ("added", OpenIDFixture.secret))
            #expect(try await op.verifiedIDToken(tokens).token.sub == "jane")
            let removed = try await HTTP.send(.PUT, server.baseURL + "/admin/v1/policy",
                                              headers: [("Content-Type", "application/yaml"), ("Authorization", "Bearer \(token)")], body: Data(withoutClients.utf8))
            #expect(removed.status == 200)
            #expect(try await TestBrowser(op).authorize(OpenIDFixture.parameters(client: "added")).status == 400)
        }
    }
}
