import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import JWTKit
import NIOHTTP1

/// A Gatehouse with OpenID clients, and a browser of sorts: a cookie jar, the hosted page's rounds as its script sends
/// them, the token endpoint as a relying party calls it, and id_tokens verified by jwt-kit against the server's JWKS.
struct OpenIDFixture: Sendable {
    static let secret = "rp-secret-0123456789"
    static let redirect = "http://127.0.0.1:9999/cb"
    static let spaRedirect = "http://localhost:9999/spa"
    static let mfa = "urn:gatehouse:acr:mfa"
    static let password = "urn:gatehouse:acr:password"

    /// UserLogin and TOTP with their `acr`; `rp` (a secret, RS256), `spa` (public, ES256) and `narrow` (openid only).
    static let policy = """
        registrationThrottle: { perAddress: 0 }
        authenticationContexts: { "\(password)": 1, "\(mfa)": 2 }
        securityChecks:
          UserLogin:
            class: UserLogin
            acr: "\(password)"
            properties: { maxAttempts: 3, blockedStateExpirationSec: 60, successStateExpirationSec: 600 }
          TOTP:
            class: TOTP
            requires: [UserLogin]
            acr: "\(mfa)"
            properties: { issuer: Gatehouse test, maxAttempts: 3 }
        applications:
          - { id: com.sample.web, platform: web }
        openIDClients:
          - id: rp
            displayName: Test RP
            secretHash: "$2b$04$cVF60iQ6vK9WE5LymdZzuuJfMhNAQw6YLJoJcwAZu1NCY5F/www1K"
            redirectURIs: ["\(redirect)"]
            postLogoutRedirectURIs: ["http://127.0.0.1:9999/bye"]
            allowedScope: "openid profile email offline_access"
            scopeElementMapping: { openid: UserLogin }
          - id: spa
            redirectURIs: ["\(spaRedirect)"]
            allowedScope: "openid profile email offline_access"
            scopeElementMapping: { openid: UserLogin }
            idTokenSigningAlg: ES256
          - id: narrow
            secretHash: "$2b$04$cVF60iQ6vK9WE5LymdZzuuJfMhNAQw6YLJoJcwAZu1NCY5F/www1K"
            redirectURIs: ["\(redirect)"]
            scopeElementMapping: { openid: UserLogin }
        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$04$sgAASYgFb4AZKl/vIQClWesqgsJQy2KQVrogNNikfxIwtWl2QMXHa", attributes: { email: john@example.com, email_verified: "true", given_name: John, locale: en } }
        """

    let server: TestServer
    var base: String { server.baseURL }

    static func run<T: Sendable>(policy: String = Self.policy, _ body: (OpenIDFixture) async throws -> T) async throws -> T {
        try await TestServer.run(policy: policy) { server in try await body(OpenIDFixture(server: server)) }
    }

    /// The parameters of an authentication request of `rp`, with `extra` added or replacing.
    static func parameters(client: String = "rp", scope: String = "openid profile email", state: String = "state-1", nonce: String? = "nonce-1",
                           _ extra: [String: String?] = [:]) -> [String: String] {
        var parameters = ["response_type": "code", "client_id": client, "redirect_uri": client == "spa" ? spaRedirect : redirect, "scope": scope,
                          "state": state]
        if let nonce { parameters["nonce"] = nonce }
        for (name, value) in extra { parameters[name] = value }
        return parameters
    }

    static func query(_ parameters: [String: String]) -> String {
        HTTP.formEncode(parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A PKCE verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode(Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        return (verifier, Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))))
    }
}

/// A browser: its cookies, and the page it was shown.
final class TestBrowser: @unchecked Sendable {
    let base: String
    private(set) var cookies: [String: String] = [:]
    /// The sealed request and CSRF token of the last sign-in page.
    private(set) var page: (request: String, csrf: String, html: String)?

    init(_ fixture: OpenIDFixture) { base = fixture.base }

    private var cookieHeader: [(String, String)] {
        cookies.isEmpty ? [] : [("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]
    }

    private func keep(_ response: TestResponse) {
        for value in response.headers["Set-Cookie"] {
            guard let pair = value.split(separator: ";").first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals]), cookie = String(pair[pair.index(after: equals)...])
            if value.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = cookie }
        }
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        let response = try await HTTP.send(.GET, base + path, headers: cookieHeader + headers)
        keep(response)
        return response
    }

    func postForm(_ path: String, _ fields: [String: String]) async throws -> TestResponse {
        let response = try await HTTP.postForm(base + path, fields.map { ($0.key, $0.value) }, headers: cookieHeader)
        keep(response)
        return response
    }

    /// `GET /oidc/authorize`: a redirect, or the page (kept for the rounds).
    func authorize(_ parameters: [String: String], headers: [(String, String)] = []) async throws -> TestResponse {
        let response = try await get("/oidc/authorize?" + OpenIDFixture.query(parameters), headers: headers)
        if response.status == 200 {
            let html = String(decoding: response.body, as: UTF8.self)
            if let request = Self.attribute("data-request", in: html), let csrf = Self.attribute("data-csrf", in: html) {
                page = (request, csrf, html)
            }
        }
        return response
    }

    static func attribute(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: name + "=\"") else { return nil }
        let rest = html[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end]).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// One round of the page, as its script sends it.
    func round(_ answers: JSON = [:], csrf: String? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        guard let page else { throw TestFailure("no sign-in page was shown") }
        let body: JSON = ["request": .string(page.request), "csrf": .string(csrf ?? page.csrf), "answers": answers]
        let response = try await HTTP.send(.POST, base + "/oidc/sign-in", headers: cookieHeader + [("Content-Type", "application/json")] + headers,
                                           body: try JSONEncoder().encode(body))
        keep(response)
        return response
    }

    /// Signs in through the page with john's password; returns the redirect to the client.
    func signIn(_ parameters: [String: String], password: String = "demo") async throws -> URLComponents {
        let start = try await authorize(parameters)
        if start.status == 302, let location = start.header("Location") { return URLComponents(string: location)! }
        guard start.status == 200 else { throw TestFailure("authorize answered \(start.status)") }
        let answer = try await round(["UserLogin": ["username": "john", "password": .string(password)]])
        guard let redirect = answer.json?["redirect"]?.stringValue else {
            throw TestFailure("the round did not finish: \(String(decoding: answer.body, as: UTF8.self))")
        }
        return URLComponents(string: redirect)!
    }
}

extension URLComponents {
    /// The value of query parameter `name`.
    func parameter(_ name: String) -> String? { queryItems?.first { $0.name == name }?.value }
}

/// An id_token's claims, as a relying party reads them (jwt-kit, checked against the server's JWKS).
struct IDToken: JWTPayload, Equatable {
    var iss: String
    var sub: String
    var aud: String
    var exp: Int64
    var iat: Int64
    var auth_time: Int64?
    var nonce: String?
    var acr: String?
    var amr: [String]?
    var at_hash: String?
    var azp: String?
    var email: String?
    var email_verified: Bool?
    var name: String?
    var given_name: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard Date(timeIntervalSince1970: TimeInterval(exp)) > Date() else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "expired") }
    }
}

extension OpenIDFixture {
    /// Exchanges `code` at the token endpoint (`rp`'s secret by HTTP Basic unless `authentication` says otherwise).
    func token(_ fields: [String: String], basic: (String, String)? = ("rp", OpenIDFixture.secret)) async throws -> TestResponse {
        var headers: [(String, String)] = []
        if let (id, secret) = basic { headers.append(("Authorization", "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())) }
        return try await HTTP.postForm(base + "/oidc/token", fields.map { ($0.key, $0.value) }, headers: headers)
    }

    func exchange(_ code: String, redirect: String = OpenIDFixture.redirect, extra: [String: String] = [:],
                  basic: (String, String)? = ("rp", OpenIDFixture.secret)) async throws -> TestResponse {
        try await token(["grant_type": "authorization_code", "code": code, "redirect_uri": redirect].merging(extra) { _, new in new }, basic: basic)
    }

    /// The id_token of a token answer, verified by jwt-kit with the server's JWKS; and its header's `alg`.
    func verifiedIDToken(_ response: TestResponse) async throws -> (token: IDToken, algorithm: String) {
        guard response.status == 200, let idToken = response.json?["id_token"]?.stringValue else {
            throw TestFailure("no id_token: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        let jwks = try await HTTP.send(.GET, base + "/.well-known/jwks.json")
        let keys = JWTKeyCollection()
        try await keys.add(jwksJSON: String(decoding: jwks.body, as: UTF8.self))
        let token = try await keys.verify(idToken, as: IDToken.self)
        let header = try JSONDecoder().decode(JSON.self, from: Base64URL.decode(idToken.split(separator: ".")[0])!)
        return (token, header["alg"]?.stringValue ?? "")
    }

    /// The `at_hash` of an access token (OpenID Connect Core §3.1.3.6).
    static func atHash(_ accessToken: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))).prefix(16))
    }
}
