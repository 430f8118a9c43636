import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import GatehouseSQLite
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

/// The RS256 key of id_tokens, rotated and retired by an operator as the ES256 keys are (`gatehouse keys`).
@Suite(.serialized, .timeLimit(.minutes(3))) struct OpenIDKeyTests {
    @Test("a rotated RS256 key signs the next id_tokens; the old one verifies until retired; the newest cannot be retired")
    func rotateAndRetireRS256() async throws {
        try await OpenIDFixture.run { op in
            let store = try SQLiteStore.open(dataDirectory: op.server.dataDirectory)
            let first = try await op.exchange(try #require(try await TestBrowser(op).signIn(OpenIDFixture.parameters()).parameter("code")))
            let oldKID = try #require(Self.kid(first))
            let newKID = try await TokenSigner.rotateRS256(in: store)
            #expect(newKID != oldKID)
            await #expect(throws: TokenSigner.KeyError.self) { try await TokenSigner.retire(kid: newKID, in: store) }
            let keys = try await store.signingKeys().filter { $0.algorithm == "RS256" }
            #expect(keys.map(\.kid).sorted() == [oldKID, newKID].sorted())
            #expect(try await TokenSigner.retire(kid: oldKID, in: store))
            // The node reads the store when the JWKS is asked for and its last read is older than 2 s.
            try await Task.sleep(for: .milliseconds(2100))
            let jwks = try #require(try await HTTP.send(.GET, op.base + "/.well-known/jwks.json").json?["keys"]?.arrayValue)
            let published = Set(jwks.compactMap { $0["kid"]?.stringValue })
            #expect(published.contains(newKID) && !published.contains(oldKID))
            let second = try await op.exchange(try #require(try await TestBrowser(op).signIn(OpenIDFixture.parameters()).parameter("code")))
            #expect(Self.kid(second) == newKID)
            _ = try await op.verifiedIDToken(second)
        }
    }

    static func kid(_ response: TestResponse) -> String? {
        guard let token = response.json?["id_token"]?.stringValue, let header = token.split(separator: ".").first,
              let bytes = Base64URL.decode(header) else { return nil }
        return (try? JSONDecoder().decode(JSON.self, from: bytes))?["kid"]?.stringValue
    }
}
