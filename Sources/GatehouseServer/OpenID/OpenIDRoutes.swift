import Foundation
import GatehouseChecks
import GatehouseProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// The OpenID Provider's HTTP endpoints: discovery, `/oidc/authorize` (the hosted page), `/oidc/sign-in` (its rounds),
/// `/oidc/token`, `/oidc/userinfo`, `/oidc/logout` and the page's assets.
struct OpenIDRoutes<Context: ClientRequestContext> {
    let provider: OpenIDProvider
    let theme: SignInTheme

    /// The policy of every page (no inline script or style; forms post only here; never framed).
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func add(to router: Router<Context>) {
        router.get(".well-known/openid-configuration") { _, _ in
            JSONBody.response(.ok, provider.discovery(), headers: [.cacheControl: "max-age=300"])
        }
        router.get("oidc/authorize", use: authorize)
        router.post("oidc/authorize", use: authorize)
        router.post("oidc/sign-in", use: signIn)
        router.post("oidc/token", use: token)
        router.get("oidc/userinfo", use: userInfo)
        router.post("oidc/userinfo", use: userInfo)
        router.get("oidc/logout", use: logout)
        router.post("oidc/logout", use: logout)
        let assets: [(String, ConsoleRoutes<Context>.Asset)] = [
            ("oidc/assets/sign-in.js", .init(String(decoding: PackageResources.sign_in_js, as: UTF8.self), contentType: "text/javascript; charset=utf-8")),
            ("oidc/assets/sign-in.css", .init(String(decoding: PackageResources.sign_in_css, as: UTF8.self), contentType: "text/css; charset=utf-8")),
            ("oidc/assets/theme.css", .init(theme.css, contentType: "text/css; charset=utf-8")),
        ]
        for (path, asset) in assets {
            router.get(RouterPath(path)) { request, _ in ConsoleRoutes<Context>.answer(asset, ifNoneMatch: request.headers[.ifNoneMatch]) }
        }
    }

    // MARK: The browser's endpoints

    @Sendable func authorize(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let (parameters, session, language, strings) = try await browserRequest(&request)
        switch try await provider.start(parameters, session: session) {
        case .error(let status, let message):
            return html(SignInPage.error(strings: strings, language: language, message: message), status: .init(code: status))
        case .redirect(let location, let newSession):
            var headers: HTTPFields = [.location: location, .cacheControl: "no-store"]
            if let newSession, newSession != session { headers[.setCookie] = sessionCookie(newSession) }
            return Response(status: .found, headers: headers)
        case .page(let authorization, let sealed, let csrf, let newSession):
            let client = provider.clients[authorization.clientID]?.displayName ?? authorization.clientID
            var response = html(SignInPage.signIn(strings: strings, language: language, client: client, sealed: sealed, csrf: csrf,
                                                  loginHint: authorization.loginHint), status: .ok)
            if newSession != session { response.headers[.setCookie] = sessionCookie(newSession) }
            return response
        }
    }

    /// A round of the page: JSON in (`request`, `csrf`, `answers`), JSON out.
    @Sendable func signIn(_ request: Request, context: Context) async throws -> Response {
        var request = request
        // JSON only: a cross-site form cannot send it without a preflight the server never allows.
        let body = try await RequestReading.json(SignInRoundBody.self, from: &request)
        if let origin = request.headers[.origin], origin != "null", !Self.sameOrigin(origin, issuer: provider.issuer, host: context.forwardedHost ?? request.head.authority) {
            return oauthError(OpenIDError(status: 403, error: "access_denied", description: "The sign-in page must be used from this server's own origin."))
        }
        var headers: [String: String] = [:]
        for field in request.headers where field.name != .authorization && field.name != .cookie {
            headers[field.name.canonicalName] = field.value
        }
        var answers: [String: JSON] = [:]
        for (name, answer) in body.answers ?? [:] where name.utf8.count <= 128 { answers[name] = answer }
        do {
            let outcome = try await provider.round(sealed: body.request, csrf: body.csrf, answers: answers,
                                                   session: Self.cookie(OpenIDProvider.sessionCookie, in: request.headers),
                                                   request: CheckRequest(headers: headers, remoteAddress: context.clientAddress))
            let answer: JSONObject = switch outcome {
            case .challenges(let challenges): ["challenges": .object(challenges)]
            case .failures(let failures): ["failures": .object(failures)]
            case .done(let redirect, let codes): ["redirect": .string(redirect), "recoveryCodes": .array(codes.map(JSON.string))]
            }
            return JSONBody.response(.ok, answer, headers: [.cacheControl: "no-store"])
        } catch let error as OpenIDError {
            return oauthError(error)
        }
    }

    @Sendable func logout(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let (parameters, session, language, strings) = try await browserRequest(&request)
        // Only a form of this page confirms: its CSRF token in the body of a POST.
        let confirmation = request.method == .post ? parameters["csrf"] : nil
        switch try await provider.logout(parameters, session: session, confirmedWith: confirmation) {
        case .error(let status, let message):
            return html(SignInPage.error(strings: strings, language: language, message: message), status: .init(code: status))
        case .confirm(let csrf, let parameters):
            return html(SignInPage.confirmLogout(strings: strings, language: language, csrf: csrf, parameters: parameters), status: .ok)
        case .signedOut(let redirect):
            let expired = "\(OpenIDProvider.sessionCookie)=; Path=/oidc; Max-Age=0; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
            if let redirect {
                return Response(status: .found, headers: [.location: redirect, .cacheControl: "no-store", .setCookie: expired])
            }
            var response = html(SignInPage.signedOut(strings: strings, language: language), status: .ok)
            response.headers[.setCookie] = expired
            return response
        }
    }

    /// A browser's request: its parameters (the query, or a POSTed form), its session cookie, and the language and
    /// strings to answer in (`ui_locales`, then `Accept-Language`).
    private func browserRequest(_ request: inout Request) async throws
        -> (parameters: [String: String], session: String?, language: String, strings: [String: String])
    {
        let parameters = request.method == .post ? try await RequestReading.form(from: &request) : RequestReading.query(request)
        let language = theme.language(uiLocales: (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init),
                                      acceptLanguage: request.headers[.acceptLanguage])
        return (parameters, Self.cookie(OpenIDProvider.sessionCookie, in: request.headers), language, theme.strings(language))
    }

    // MARK: The client's endpoints

    @Sendable func token(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let form: [String: String]
        do {
            form = try await RequestReading.form(from: &request)
        } catch let error as GatehouseError {
            return oauthError(OpenIDError.invalidRequest(error.message))
        }
        do {
            let answer = try await provider.token(form: form, authorization: request.headers[.authorization], address: context.clientAddress)
            return JSONBody.response(.ok, answer, headers: RuntimeRoutes<Context>.tokenFields)
        } catch let error as OpenIDError {
            return oauthError(error)
        }
    }

    @Sendable func userInfo(_ request: Request, context: Context) async throws -> Response {
        var request = request
        var token = TokenValidator.bearerToken(request.headers[.authorization])
        if token == nil, request.method == .post, RequestReading.mediaType(of: request.headers[.contentType] ?? "", is: RequestReading.formType) {
            token = try await RequestReading.form(from: &request)["access_token"]
        }
        do {
            return JSONBody.response(.ok, try await provider.userInfo(accessToken: token), headers: [.cacheControl: "no-store"])
        } catch let error as OpenIDError {
            return oauthError(error)
        }
    }

    // MARK: Helpers

    private var secure: Bool { provider.issuer.lowercased().hasPrefix("https:") }

    private func sessionCookie(_ value: String) -> String {
        "\(OpenIDProvider.sessionCookie)=\(value); Path=/oidc; Max-Age=2592000; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    private func html(_ page: String, status: HTTPResponse.Status) -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy
        for (name, value) in ConsoleRoutes<Context>.securityHeaders where name.canonicalName != "content-security-policy" { headers[name] = value }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    private func oauthError(_ error: OpenIDError) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let challenge = error.challenge { headers[.wwwAuthenticate] = challenge }
        return JSONBody.response(.init(code: error.status), ["error": error.error, "error_description": error.description], headers: headers)
    }

    /// The value of cookie `name`, if the request has it.
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        for field in headers where field.name == .cookie {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return nil
    }

    /// Whether `origin` is the issuer's, or the host's the request was sent to.
    static func sameOrigin(_ origin: String, issuer: String, host: String?) -> Bool {
        let lowered = origin.lowercased()
        if lowered == issuer.lowercased() { return true }
        guard let host, let url = URLComponents(string: lowered), let originHost = url.host else { return false }
        let authority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return authority == host.lowercased()
    }
}

/// The body of a page's round.
struct SignInRoundBody: Decodable, Sendable {
    var request: String
    var csrf: String
    var answers: [String: JSON]?
}

extension OpenIDProvider {
    /// `/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §3).
    func discovery() -> JSONObject {
        let base = issuer
        let contexts = service.policy.openIDClients.values.first?.application.authenticationContexts.levels.keys.sorted() ?? []
        return [
            "issuer": .string(base),
            "authorization_endpoint": .string(base + "/oidc/authorize"),
            "token_endpoint": .string(base + "/oidc/token"),
            "userinfo_endpoint": .string(base + "/oidc/userinfo"),
            "end_session_endpoint": .string(base + "/oidc/logout"),
            "jwks_uri": .string(base + "/.well-known/jwks.json"),
            "scopes_supported": ["openid", "profile", "email", "phone", "offline_access"],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "sid", "name",
                                 "preferred_username", "given_name", "family_name", "locale", "zoneinfo", "email", "email_verified",
                                 "phone_number", "phone_number_verified"],
            "acr_values_supported": .array(contexts.map(JSON.string)),
            "prompt_values_supported": ["none", "login", "consent", "select_account"],
            "ui_locales_supported": ["en", "de", "fr"],
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
            "authorization_response_iss_parameter_supported": true,
            "frontchannel_logout_supported": false,
        ]
    }
}
