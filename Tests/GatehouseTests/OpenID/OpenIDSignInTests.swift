import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// The hosted page beyond the conformance modules: TOTP step-up by `acr_values`, the page's own protections (CSP,
/// CSRF, the seal, the origin), RP-initiated logout, and the policy's checks of OpenID clients.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OpenIDSignInTests {
    @Test("acr_values=mfa adds TOTP after the password: enrolment, a code, recovery codes once; the id_token says acr mfa, amr pwd otp mfa")
    func stepUpWithTOTP() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let parameters = OpenIDFixture.parameters(["acr_values": OpenIDFixture.mfa])
            #expect(try await browser.authorize(parameters).status == 200)
            let first = try await browser.round()
            #expect(first.json?["challenges"]?["UserLogin"]?["kind"]?.stringValue == "UserLogin")
            #expect(first.json?["challenges"]?["TOTP"] == nil)   // waits for the login (requires: [UserLogin])
            let second = try await browser.round(["UserLogin": ["username": "john", "password": "demo"]])
            let enrolment = try #require(second.json?["challenges"]?["TOTP"]?["challenge"]?["enrolment"])
            #expect(second.json?["challenges"]?["TOTP"]?["kind"]?.stringValue == "TOTP")
            let secret = try #require(enrolment["secret"]?.stringValue.flatMap(Base32.decode))
            let wrong = try await browser.round(["TOTP": ["code": "000000"]])
            #expect(wrong.json?["challenges"]?["TOTP"]?["challenge"]?["remainingAttempts"]?.intValue == 2)
            let code = OneTimePassword(secret: secret).code(at: EpochTime.nowMillis())
            let done = try await browser.round(["TOTP": ["code": .string(code)]])
            guard case .array(let recoveryCodes)? = done.json?["recoveryCodes"] else { throw TestFailure("no recovery codes") }
            #expect(recoveryCodes.count == 10)
            let redirect = try #require(done.json?["redirect"]?.stringValue.flatMap(URLComponents.init(string:)))
            let token = try await op.verifiedIDToken(try await op.exchange(try #require(redirect.parameter("code")))).token
            #expect(token.acr == OpenIDFixture.mfa)
            #expect(Set(token.amr ?? []) == ["pwd", "otp", "mfa"])
            // The same browser, without step-up: signed in already, a code at once with the higher acr it holds.
            let again = try await browser.authorize(OpenIDFixture.parameters())
            #expect(again.status == 302 && again.header("Location")?.contains("code=") == true)
        }
    }

    @Test("single sign-on: signed in for one client, the browser gets a code for another at once; a step-up one asks only the TOTP")
    func singleSignOn() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            _ = try await browser.signIn(OpenIDFixture.parameters())
            let (verifier, challenge) = OpenIDFixture.pkce()
            let other = try await browser.authorize(OpenIDFixture.parameters(client: "spa", ["code_challenge": challenge, "code_challenge_method": "S256"]))
            #expect(other.status == 302)
            let code = try #require(other.header("Location").flatMap(URLComponents.init(string:))?.parameter("code"))
            let tokens = try await op.exchange(code, redirect: OpenIDFixture.spaRedirect, extra: ["client_id": "spa", "code_verifier": verifier], basic: nil)
            #expect(try await op.verifiedIDToken(tokens).token.aud == "spa")
            // Another browser is not signed in.
            #expect(try await TestBrowser(op).authorize(OpenIDFixture.parameters(client: "narrow")).status == 200)
            // Step-up for a third client: the password holds, only the second factor is asked.
            #expect(try await browser.authorize(OpenIDFixture.parameters(client: "narrow", ["acr_values": OpenIDFixture.mfa])).status == 200)
            let round = try await browser.round()
            #expect(round.json?["challenges"]?["TOTP"] != nil && round.json?["challenges"]?["UserLogin"] == nil)
        }
    }

    @Test("the page: CSP without inline script or style, never framed, no-store; its strings escaped")
    func pageHeaders() async throws {
        try await OpenIDFixture.run { op in
            let page = try await TestBrowser(op).authorize(OpenIDFixture.parameters(["login_hint": "\"><script>alert(1)</script>"]))
            let csp = try #require(page.header("Content-Security-Policy"))
            #expect(csp.contains("script-src 'self'") && csp.contains("style-src 'self'") && !csp.contains("unsafe-inline"))
            #expect(csp.contains("frame-ancestors 'none'") && page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Cache-Control") == "no-store")
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(!html.contains("<script>") && !html.contains("style=") && !html.contains(" onclick"))
            #expect(html.contains("&quot;&gt;&lt;script&gt;"))
            let script = try await HTTP.send(.GET, op.base + "/oidc/assets/sign-in.js")
            #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        }
    }

    @Test("a round needs this browser's session and the page's CSRF token, an untampered seal, JSON, and this server's origin")
    func roundProtections() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            _ = try await browser.authorize(OpenIDFixture.parameters())
            #expect(try await browser.round(csrf: "forged").status == 403)
            #expect(try await browser.round(headers: [("Origin", "http://attacker.example")]).status == 403)
            #expect(try await browser.round(headers: [("Origin", op.base)]).status == 200)
            // Another browser (its own session) replaying this page's request and token.
            let other = TestBrowser(op)
            _ = try await other.authorize(OpenIDFixture.parameters())
            let page = try #require(browser.page)
            let stolen = try await HTTP.send(
                .POST, op.base + "/oidc/sign-in", headers: [("Content-Type", "application/json"), ("Cookie", "gatehouse_sid=" + (other.cookies["gatehouse_sid"] ?? ""))],
                body: try JSONEncoder().encode(["request": page.request, "csrf": page.csrf]))
            #expect(stolen.status == 403)
            // The sealed request changed (another redirect URI): refused.
            let parts = page.request.split(separator: ".")
            var changed = try JSONDecoder().decode(JSON.self, from: try #require(Base64URL.decode(parts[0])))
            if case .object(var object) = changed { object["redirectURI"] = "http://attacker.example/cb"; changed = .object(object) }
            let tampered = Base64URL.encode(try JSONEncoder().encode(changed)) + "." + parts[1]
            let forged = try await HTTP.send(
                .POST, op.base + "/oidc/sign-in", headers: [("Content-Type", "application/json"), ("Cookie", "gatehouse_sid=" + (browser.cookies["gatehouse_sid"] ?? ""))],
                body: try JSONEncoder().encode(["request": tampered, "csrf": page.csrf]))
            #expect(forged.status == 403)
            // A cross-site form cannot send JSON: a form body is refused before anything runs.
            let form = try await HTTP.postForm(op.base + "/oidc/sign-in", [("request", page.request), ("csrf", page.csrf)])
            #expect(form.status == 415 || form.status == 400)
        }
    }

    @Test("RP-initiated logout: with id_token_hint, to the registered post-logout URI with the state; the session ends on the server")
    func logout() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            let code = try #require(try await browser.signIn(OpenIDFixture.parameters()).parameter("code"))
            let idToken = try #require(try await op.exchange(code).json?["id_token"]?.stringValue)
            let session = try #require(browser.cookies["gatehouse_sid"])
            let unregistered = try await browser.get("/oidc/logout?" + OpenIDFixture.query(["id_token_hint": idToken, "post_logout_redirect_uri": "http://attacker.example/"]))
            #expect(unregistered.status == 400 && unregistered.header("Location") == nil)
            let response = try await browser.get("/oidc/logout?" + OpenIDFixture.query(
                ["id_token_hint": idToken, "post_logout_redirect_uri": "http://127.0.0.1:9999/bye", "state": "bye-1"]))
            #expect(response.status == 302)
            #expect(response.header("Location")?.hasPrefix("http://127.0.0.1:9999/bye?state=bye-1") == true)
            #expect(response.header("Set-Cookie")?.contains("Max-Age=0") == true)
            // The old cookie, sent again, names a session whose checks were logged out.
            let replay = try await HTTP.send(.GET, op.base + "/oidc/authorize?" + OpenIDFixture.query(OpenIDFixture.parameters(["prompt": "none"])),
                                             headers: [("Cookie", "gatehouse_sid=" + session)])
            #expect(replay.header("Location").flatMap(URLComponents.init(string:))?.parameter("error") == "login_required")
        }
    }

    @Test("logout without id_token_hint asks the user; only the page's form, with its CSRF token, signs out")
    func logoutConfirmation() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            _ = try await browser.signIn(OpenIDFixture.parameters())
            let session = try #require(browser.cookies["gatehouse_sid"])
            let ask = try await browser.get("/oidc/logout")
            let html = String(decoding: ask.body, as: UTF8.self)
            #expect(ask.status == 200 && html.contains("id=\"gatehouse-logout\""))
            let csrf = try #require(TestBrowser.attribute("name=\"csrf\" value", in: html))
            let forged = try await browser.postForm("/oidc/logout", ["csrf": "forged"])
            #expect(forged.status == 200 && String(decoding: forged.body, as: UTF8.self).contains("gatehouse-logout"))   // asked again
            let confirmed = try await browser.postForm("/oidc/logout", ["csrf": csrf])
            #expect(String(decoding: confirmed.body, as: UTF8.self).contains("gatehouse-signed-out"))
            let replay = try await HTTP.send(.GET, op.base + "/oidc/authorize?" + OpenIDFixture.query(OpenIDFixture.parameters(["prompt": "none"])),
                                             headers: [("Cookie", "gatehouse_sid=" + session)])
            #expect(replay.header("Location").flatMap(URLComponents.init(string:))?.parameter("error") == "login_required")
        }
    }

    @Test("a wrong password is said on the page; three block the check, said as a failure; the account is never the client's to reset")
    func wrongPasswords() async throws {
        try await OpenIDFixture.run { op in
            let browser = TestBrowser(op)
            _ = try await browser.authorize(OpenIDFixture.parameters())
            var last = try await browser.round(["UserLogin": ["username": "john", "password": "nope"]])
            #expect(last.json?["challenges"]?["UserLogin"]?["challenge"]?["errorMsg"]?.stringValue != nil)
            for _ in 0..<2 { last = try await browser.round(["UserLogin": ["username": "john", "password": "nope"]]) }
            #expect(last.json?["failures"]?["UserLogin"]?["kind"]?.stringValue == "UserLogin", "\(String(decoding: last.body, as: UTF8.self))")
        }
    }

    @Test("an operator's theme: its stylesheet served after the page's own, its strings over the built-in ones, a language of its own")
    func theme() async throws {
        let folder = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try ":root { --gatehouse-accent: #7a1fa2; }\n".write(toFile: folder + "/theme.css", atomically: true, encoding: .utf8)
        try #"{"en": {"heading": "Sign in to {client} with your Example ID"}, "nl": {"heading": "Inloggen bij {client}"}}"#
            .write(toFile: folder + "/strings.json", atomically: true, encoding: .utf8)
        let theme = try SignInTheme.load(folder: folder)
        try await TestServer.run(policy: OpenIDFixture.policy, signInTheme: theme) { server in
            let op = OpenIDFixture(server: server)
            let english = String(decoding: try await TestBrowser(op).authorize(OpenIDFixture.parameters()).body, as: UTF8.self)
            #expect(english.contains("Sign in to Test RP with your Example ID"))
            #expect(english.range(of: "sign-in.css")!.lowerBound < english.range(of: "theme.css")!.lowerBound)
            let dutch = String(decoding: try await TestBrowser(op).authorize(OpenIDFixture.parameters(["ui_locales": "nl"])).body, as: UTF8.self)
            #expect(dutch.contains("<html lang=\"nl\">") && dutch.contains("Inloggen bij Test RP"))
            #expect(dutch.contains("Password"))   // a key the theme's language lacks: English
            let css = try await HTTP.send(.GET, op.base + "/oidc/assets/theme.css")
            #expect(String(decoding: css.body, as: UTF8.self).contains("#7a1fa2"))
        }
        try "{not json".write(toFile: folder + "/strings.json", atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try SignInTheme.load(folder: folder) }
    }

    @Test("new sign-in sessions are registrations, throttled per address as the runtime's are: a script cannot fill the store")
    func sessionsAreThrottled() async throws {
        let policy = OpenIDFixture.policy.replacingOccurrences(of: "registrationThrottle: { perAddress: 0 }",
                                                               with: "registrationThrottle: { perAddress: 3, windowSec: 60 }")
        try await OpenIDFixture.run(policy: policy) { op in
            var statuses: [Int] = []
            for _ in 0..<4 {
                let browser = TestBrowser(op)   // a new session each time
                _ = try await browser.authorize(OpenIDFixture.parameters())
                statuses.append(try await browser.round().status)
            }
            #expect(statuses == [200, 200, 200, 429])
        }
    }

    @Test("the policy refuses OpenID clients it cannot serve safely, naming the key")
    func policyChecks() throws {
        let base = """
            securityChecks:
              UserLogin: { class: UserLogin }
            applications:
              - { id: com.sample.web, platform: web }
            openIDClients:
              - { id: rp, redirectURIs: [%URI%] %EXTRA% }
            """
        func problem(_ uri: String, _ extra: String = "") -> String? {
            let mapping = extra.contains("scopeElementMapping") ? "" : ", scopeElementMapping: { openid: UserLogin }"
            let yaml = base.replacingOccurrences(of: "%URI%", with: uri).replacingOccurrences(of: "%EXTRA%", with: mapping + extra)
            do {
                _ = try SecurityPolicy.parse(yaml: yaml, file: "policy.yaml", registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(problem("\"https://app.example.com/cb\"") == nil)
        // OpenID clients alone make a policy (no MobileFirst application).
        let onlyOpenID = base.replacingOccurrences(of: "applications:\n  - { id: com.sample.web, platform: web }\n", with: "")
            .replacingOccurrences(of: "%URI%", with: "\"https://app.example.com/cb\"").replacingOccurrences(of: "%EXTRA%", with: ", scopeElementMapping: { openid: UserLogin }")
        #expect(!onlyOpenID.contains("applications"))
        #expect(throws: Never.self) {
            try SecurityPolicy.parse(yaml: onlyOpenID, file: "policy.yaml", registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
        }
        #expect(problem("\"http://localhost:8080/cb\"") == nil)
        #expect(problem("\"http://app.example.com/cb\"")?.contains("openIDClients[0].redirectURIs[0]") == true)
        #expect(problem("\"https://app.example.com/*\"")?.contains("wildcard") == true)
        #expect(problem("\"https://app.example.com/cb#x\"")?.contains("fragment") == true)
        #expect(problem("\"/cb\"")?.contains("absolute") == true)
        #expect(problem("\"https://app.example.com/cb\"", ", idTokenSigningAlg: HS256")?.contains("idTokenSigningAlg") == true)
        #expect(problem("\"https://app.example.com/cb\"", ", secretHash: plain-secret")?.contains("secretHash") == true)
        #expect(problem("\"https://app.example.com/cb\"", ", scopeElementMapping: { openid: Nope }")?.contains("Nope") == true)
        #expect(problem("\"https://app.example.com/cb\"", ", scopeElementMapping: { profile: UserLogin }")?.contains("scopeElementMapping.openid") == true)
    }
}
