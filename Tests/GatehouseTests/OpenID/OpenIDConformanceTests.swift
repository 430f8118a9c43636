import Foundation
import GatehouseProtocol
import Testing

/// The OpenID Connect conformance suite's Basic OP plan (`oidcc-basic-certification-test-plan`), one test per module
/// that applies to a code-flow provider without dynamic registration, each named after its module; the relying
/// party's checks (signature by the JWKS, `iss`, `aud`, `nonce`, `at_hash`, expiry) are jwt-kit's and the test's own.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OpenIDConformanceTests {
    @Test("oidcc-server: the code flow gives an id_token that verifies with the JWKS, with iss, aud, nonce, at_hash, auth_time")
    func server() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let redirect = try await browser.signIn(OpenIDFixture.parameters())
            #expect(redirect.parameter("state") == "state-1")
            #expect(redirect.parameter("iss") == op.base)   // RFC 9207
            let response = try await op.exchange(try #require(redirect.parameter("code")))
            #expect(response.header("Cache-Control") == "no-store")
            let (token, algorithm) = try await op.verifiedIDToken(response)
            #expect(algorithm == "RS256")
            #expect(token.iss == op.base && token.aud == "rp" && token.sub == "john" && token.nonce == "nonce-1" && token.azp == "rp")
            #expect(token.at_hash == OpenIDFixture.atHash(try #require(response.json?["access_token"]?.stringValue)))
            #expect(token.exp > token.iat)
            let authTime = try #require(token.auth_time)
            #expect(abs(authTime - Int64(Date().timeIntervalSince1970)) < 30)
            #expect(response.json?["token_type"]?.stringValue == "Bearer")
        }
    }

    @Test("oidcc-response-type-missing: the error goes back to the redirect URI with the state")
    func responseTypeMissing() async throws {
        try await OpenIDFixture.run { op in
            let response = try await TestBrowser(op).authorize(OpenIDFixture.parameters(["response_type": nil]))
            #expect(response.status == 302)
            let location = try #require(response.header("Location").flatMap(URLComponents.init(string:)))
            #expect(location.parameter("error") == "invalid_request" && location.parameter("state") == "state-1")
            #expect(location.path == "/cb")
        }
    }

    @Test("oidcc-userinfo-get, -post-header, -post-body: the claims of the scope, sub equal to the id_token's")
    func userinfo() async throws {
        try await OpenIDFixture.run { op in
            let redirect = try await TestBrowser(op).signIn(OpenIDFixture.parameters())
            let response = try await op.exchange(try #require(redirect.parameter("code")))
            let accessToken = try #require(response.json?["access_token"]?.stringValue)
            let viaGet = try await HTTP.send(.GET, op.base + "/oidc/userinfo", headers: [("Authorization", "Bearer " + accessToken)])
            let viaPostHeader = try await HTTP.send(.POST, op.base + "/oidc/userinfo", headers: [("Authorization", "Bearer " + accessToken)])
            let viaPostBody = try await HTTP.postForm(op.base + "/oidc/userinfo", [("access_token", accessToken)])
            for answer in [viaGet, viaPostHeader, viaPostBody] {
                #expect(answer.status == 200)
                #expect(answer.json?["sub"]?.stringValue == "john")
                #expect(answer.json?["email"]?.stringValue == "john@example.com")
                #expect(answer.json?["email_verified"] == .bool(true))
                #expect(answer.json?["name"]?.stringValue == "John Doe")
            }
            let bad = try await HTTP.send(.GET, op.base + "/oidc/userinfo", headers: [("Authorization", "Bearer not-a-token")])
            #expect(bad.status == 401 && bad.header("WWW-Authenticate")?.contains("invalid_token") == true)
        }
    }

    @Test("oidcc-ensure-request-without-nonce-succeeds-for-code-flow")
    func withoutNonce() async throws {
        try await OpenIDFixture.run { op in
            let redirect = try await TestBrowser(op).signIn(OpenIDFixture.parameters(nonce: nil))
            let (token, _) = try await op.verifiedIDToken(try await op.exchange(try #require(redirect.parameter("code"))))
            #expect(token.nonce == nil)
        }
    }

    @Test("oidcc-scope-profile, -email, -all: claims follow the scope; unknown and unallowed scope values are left out")
    func scopes() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            var redirect = try await browser.signIn(OpenIDFixture.parameters(scope: "openid"))
            var response = try await op.exchange(try #require(redirect.parameter("code")))
            var userinfo = try await HTTP.send(.GET, op.base + "/oidc/userinfo",
                                               headers: [("Authorization", "Bearer " + (response.json?["access_token"]?.stringValue ?? ""))])
            #expect(userinfo.json?["email"] == nil && userinfo.json?["name"] == nil && userinfo.json?["sub"]?.stringValue == "john")
            redirect = try await browser.signIn(OpenIDFixture.parameters(scope: "openid profile email phone address"))
            response = try await op.exchange(try #require(redirect.parameter("code")))
            #expect(response.json?["scope"]?.stringValue == "email openid profile")
            userinfo = try await HTTP.send(.GET, op.base + "/oidc/userinfo",
                                           headers: [("Authorization", "Bearer " + (response.json?["access_token"]?.stringValue ?? ""))])
            #expect(userinfo.json?["email"]?.stringValue == "john@example.com" && userinfo.json?["given_name"]?.stringValue == "John")
        }
    }

    @Test("oidcc-ensure-other-scope-order-succeeds, oidcc-ensure-request-with-unknown-parameter-succeeds, oidcc-display-page/-popup, oidcc-claims-essential, oidcc-claims-locales")
    func toleratedParameters() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let extra: [String: String?] = ["display": "popup", "extra_parameter": "x", "claims_locales": "de",
                                            "claims": #"{"userinfo":{"name":{"essential":true}}}"#]
            let redirect = try await browser.signIn(OpenIDFixture.parameters(scope: "email openid", extra))
            #expect(redirect.parameter("code") != nil)
            let (token, _) = try await op.verifiedIDToken(try await op.exchange(try #require(redirect.parameter("code"))))
            #expect(token.sub == "john")
        }
    }

    @Test("oidcc-prompt-login: the user signs in again, and auth_time is the new sign-in's")
    func promptLogin() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let first = try await browser.signIn(OpenIDFixture.parameters())
            let firstToken = try await op.verifiedIDToken(try await op.exchange(try #require(first.parameter("code")))).token
            try await Task.sleep(for: .milliseconds(1100))
            let page = try await browser.authorize(OpenIDFixture.parameters(["prompt": "login"]))
            #expect(page.status == 200)   // the page, not a redirect
            let again = try await browser.signIn(OpenIDFixture.parameters(["prompt": "login"]))
            let secondToken = try await op.verifiedIDToken(try await op.exchange(try #require(again.parameter("code")))).token
            #expect((secondToken.auth_time ?? 0) > (firstToken.auth_time ?? .max))
        }
    }

    @Test("oidcc-prompt-none-not-logged-in: login_required at the redirect URI, with the state")
    func promptNoneNotLoggedIn() async throws {
        try await OpenIDFixture.run { op in
            let response = try await TestBrowser(op).authorize(OpenIDFixture.parameters(["prompt": "none"]))
            let location = try #require(response.header("Location").flatMap(URLComponents.init(string:)))
            #expect(response.status == 302 && location.parameter("error") == "login_required" && location.parameter("state") == "state-1")
        }
    }

    @Test("oidcc-prompt-none-logged-in, oidcc-id-token-hint: a code without any page")
    func promptNoneLoggedIn() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let first = try await browser.signIn(OpenIDFixture.parameters())
            let firstCode = try #require(first.parameter("code"))
            let idToken = try #require(try await op.exchange(firstCode).json?["id_token"]?.stringValue)
            let response = try await browser.authorize(OpenIDFixture.parameters(["prompt": "none", "id_token_hint": idToken]))
            let location = try #require(response.header("Location").flatMap(URLComponents.init(string:)))
            #expect(response.status == 302 && location.parameter("code") != nil && location.parameter("error") == nil)
        }
    }

    @Test("oidcc-max-age-1: a sign-in older than max_age is asked again (login_required with prompt=none)")
    func maxAgeOne() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let first = try await browser.signIn(OpenIDFixture.parameters())
            let firstToken = try await op.verifiedIDToken(try await op.exchange(try #require(first.parameter("code")))).token
            try await Task.sleep(for: .milliseconds(2100))
            let none = try await browser.authorize(OpenIDFixture.parameters(["max_age": "1", "prompt": "none"]))
            #expect(none.header("Location").flatMap(URLComponents.init(string:))?.parameter("error") == "login_required")
            let page = try await browser.authorize(OpenIDFixture.parameters(["max_age": "1"]))
            #expect(page.status == 200)
            let again = try await browser.signIn(OpenIDFixture.parameters(["max_age": "1"]))
            let token = try await op.verifiedIDToken(try await op.exchange(try #require(again.parameter("code")))).token
            #expect((token.auth_time ?? 0) > (firstToken.auth_time ?? .max))
        }
    }

    @Test("oidcc-max-age-10000: a recent sign-in is kept, auth_time unchanged")
    func maxAgeLong() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let first = try await browser.signIn(OpenIDFixture.parameters())
            let firstToken = try await op.verifiedIDToken(try await op.exchange(try #require(first.parameter("code")))).token
            let response = try await browser.authorize(OpenIDFixture.parameters(["max_age": "10000"]))
            #expect(response.status == 302)
            let code = try #require(response.header("Location").flatMap(URLComponents.init(string:))?.parameter("code"))
            let token = try await op.verifiedIDToken(try await op.exchange(code)).token
            #expect(token.auth_time == firstToken.auth_time)
        }
    }

    @Test("oidcc-login-hint and oidcc-ui-locales: the page fills the username in and speaks German")
    func loginHintAndLocales() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let page = try await browser.authorize(OpenIDFixture.parameters(["login_hint": "john", "ui_locales": "de-CH en"]))
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(TestBrowser.attribute("data-login-hint", in: html) == "john")
            #expect(html.contains("<html lang=\"de\">") && html.contains("Bei Test RP anmelden"))
            let english = try await TestBrowser(op).authorize(OpenIDFixture.parameters(), headers: [("Accept-Language", "fr;q=0.5, en;q=0.9")])
            #expect(String(decoding: english.body, as: UTF8.self).contains("<html lang=\"en\">"))
        }
    }

    @Test("oidcc-ensure-request-with-acr-values-succeeds: the acr asked for is the one proved")
    func acrValues() async throws {
        try await OpenIDFixture.run { op in
            let redirect = try await TestBrowser(op).signIn(OpenIDFixture.parameters(["acr_values": OpenIDFixture.password]))
            let token = try await op.verifiedIDToken(try await op.exchange(try #require(redirect.parameter("code")))).token
            #expect(token.acr == OpenIDFixture.password && token.amr == ["pwd"])
        }
    }

    @Test("oidcc-codereuse: a code works once; its second use is invalid_grant and revokes the tokens of the first (RFC 6749 §4.1.2)")
    func codeReuse() async throws {
        try await OpenIDFixture.run { op in
            let code = try #require(try await TestBrowser(op).signIn(OpenIDFixture.parameters(scope: "openid offline_access")).parameter("code"))
            let first = try await op.exchange(code)
            let accessToken = try #require(first.json?["access_token"]?.stringValue)
            let refreshToken = try #require(first.json?["refresh_token"]?.stringValue)
            let bearer = [("Authorization", "Bearer " + accessToken)]
            #expect(try await HTTP.send(.GET, op.base + "/oidc/userinfo", headers: bearer).status == 200)
            let again = try await op.exchange(code)
            #expect(again.status == 400 && again.json?["error"]?.stringValue == "invalid_grant")
            #expect(try await HTTP.send(.GET, op.base + "/oidc/userinfo", headers: bearer).status == 401)
            #expect(try await op.token(["grant_type": "refresh_token", "refresh_token": refreshToken]).json?["error"]?.stringValue == "invalid_grant")
        }
    }

    @Test("oidcc-ensure-registered-redirect-uri: an unregistered redirect URI is said on the page, never redirected to")
    func registeredRedirectURI() async throws {
        try await OpenIDFixture.run { op in
            for uri in ["http://127.0.0.1:9999/cb/other", "http://127.0.0.1:9999/cb?x=1", "http://attacker.example/cb", "HTTP://127.0.0.1:9999/cb"] {
                let response = try await TestBrowser(op).authorize(OpenIDFixture.parameters(["redirect_uri": uri]))
                #expect(response.status == 400 && response.header("Location") == nil, "\(uri)")
                #expect(String(decoding: response.body, as: UTF8.self).contains("has not registered"))
            }
            let unknown = try await TestBrowser(op).authorize(OpenIDFixture.parameters(client: "nobody"))
            #expect(unknown.status == 400 && unknown.header("Location") == nil)
        }
    }

    @Test("oidcc-server-client-secret-post, and a wrong secret: invalid_client (401 with a Basic challenge for HTTP Basic)")
    func clientSecretPost() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            var code = try #require(try await browser.signIn(OpenIDFixture.parameters()).parameter("code"))
            let post = try await op.exchange(code, extra: ["client_id": "rp", "client_secret": OpenIDFixture.secret], basic: nil)
            #expect(post.status == 200)
            code = try #require(try await browser.signIn(OpenIDFixture.parameters()).parameter("code"))
            let wrong = try await op.exchange(code, basic: ("rp", "wrong-secret"))
            #expect(wrong.status == 401 && wrong.json?["error"]?.stringValue == "invalid_client" && wrong.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            let noSecret = try await op.exchange(code, extra: ["client_id": "rp"], basic: nil)
            #expect(noSecret.status == 401 && noSecret.json?["error"]?.stringValue == "invalid_client")
        }
    }

    @Test("oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: request_not_supported")
    func requestObject() async throws {
        try await OpenIDFixture.run { op in
            let response = try await TestBrowser(op).authorize(OpenIDFixture.parameters(["request": "eyJhbGciOiJub25lIn0.e30."]))
            let location = try #require(response.header("Location").flatMap(URLComponents.init(string:)))
            #expect(location.parameter("error") == "request_not_supported" && location.parameter("state") == "state-1")
        }
    }

    @Test("oidcc-refresh-token: rotated on use; a used refresh token, sent again, is refused and ends its family")
    func refreshToken() async throws {
        try await OpenIDFixture.run { op in
            let code = try #require(try await TestBrowser(op).signIn(OpenIDFixture.parameters(scope: "openid offline_access")).parameter("code"))
            let first = try await op.exchange(code)
            let refresh1 = try #require(first.json?["refresh_token"]?.stringValue)
            let second = try await op.token(["grant_type": "refresh_token", "refresh_token": refresh1])
            #expect(second.status == 200)
            let (token, _) = try await op.verifiedIDToken(second)
            #expect(token.sub == "john" && token.nonce == nil)
            let refresh2 = try #require(second.json?["refresh_token"]?.stringValue)
            #expect(refresh2 != refresh1)
            let replay = try await op.token(["grant_type": "refresh_token", "refresh_token": refresh1])
            #expect(replay.status == 400 && replay.json?["error"]?.stringValue == "invalid_grant")
            // The replay revoked the family: the token rotated from it is refused too.
            let afterReplay = try await op.token(["grant_type": "refresh_token", "refresh_token": refresh2])
            #expect(afterReplay.status == 400 && afterReplay.json?["error"]?.stringValue == "invalid_grant")
            let otherClient = try await op.token(["grant_type": "refresh_token", "refresh_token": "x"], basic: ("narrow", OpenIDFixture.secret))
            #expect(otherClient.json?["error"]?.stringValue == "invalid_grant")
            let noOffline = try #require(try await TestBrowser(op).signIn(OpenIDFixture.parameters(scope: "openid")).parameter("code"))
            #expect(try await op.exchange(noOffline).json?["refresh_token"] == nil)
        }
    }

    @Test("oidcc-ensure-request-with-valid-pkce-succeeds; a wrong verifier or none is invalid_grant; a public client without PKCE is refused")
    func pkce() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let (verifier, challenge) = OpenIDFixture.pkce()
            let parameters = OpenIDFixture.parameters(client: "spa", ["code_challenge": challenge, "code_challenge_method": "S256"])
            var code = try #require(try await browser.signIn(parameters).parameter("code"))
            let good = try await op.exchange(code, redirect: OpenIDFixture.spaRedirect, extra: ["client_id": "spa", "code_verifier": verifier], basic: nil)
            let (token, algorithm) = try await op.verifiedIDToken(good)
            #expect(algorithm == "ES256" && token.aud == "spa")
            code = try #require(try await browser.signIn(parameters).parameter("code"))
            let wrong = try await op.exchange(code, redirect: OpenIDFixture.spaRedirect, extra: ["client_id": "spa", "code_verifier": OpenIDFixture.pkce().verifier], basic: nil)
            #expect(wrong.status == 400 && wrong.json?["error"]?.stringValue == "invalid_grant")
            code = try #require(try await browser.signIn(parameters).parameter("code"))
            let missing = try await op.exchange(code, redirect: OpenIDFixture.spaRedirect, extra: ["client_id": "spa"], basic: nil)
            #expect(missing.status == 400 && missing.json?["error"]?.stringValue == "invalid_grant")
            let withoutPKCE = try await browser.authorize(OpenIDFixture.parameters(client: "spa"))
            #expect(withoutPKCE.header("Location").flatMap(URLComponents.init(string:))?.parameter("error") == "invalid_request")
            let plain = try await browser.authorize(OpenIDFixture.parameters(client: "spa", ["code_challenge": challenge, "code_challenge_method": "plain"]))
            #expect(plain.header("Location").flatMap(URLComponents.init(string:))?.parameter("error") == "invalid_request")
        }
    }

    @Test("oidcc-discovery-endpoint-verification: the metadata the spec requires, the issuer this server's, a JWKS with RS256 and ES256")
    func discovery() async throws {
        try await OpenIDFixture.run { op in
            let metadata = try #require(try await HTTP.send(.GET, op.base + "/.well-known/openid-configuration").json)
            #expect(metadata["issuer"]?.stringValue == op.base)
            for member in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "response_types_supported",
                           "subject_types_supported", "id_token_signing_alg_values_supported", "end_session_endpoint"] {
                #expect(metadata[member] != nil, "\(member)")
            }
            #expect(metadata["id_token_signing_alg_values_supported"] == ["RS256", "ES256"])
            #expect(metadata["code_challenge_methods_supported"] == ["S256"])
            // Before any id_token: the JWKS has the RS256 key an RS256 client's tokens will be signed with.
            let jwks = try #require(try await HTTP.send(.GET, op.base + "/.well-known/jwks.json").json?["keys"])
            guard case .array(let keys) = jwks else { throw TestFailure("no keys") }
            #expect(Set(keys.compactMap { $0["alg"]?.stringValue }) == ["RS256", "ES256"])
        }
    }

    @Test("oidcc-ensure-post-request-succeeds: the authorization request as a POSTed form")
    func postRequest() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let response = try await browser.postForm("/oidc/authorize", OpenIDFixture.parameters())
            #expect(response.status == 200 && TestBrowser.attribute("data-request", in: String(decoding: response.body, as: UTF8.self)) != nil)
        }
    }
}
