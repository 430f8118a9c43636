import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// The authorization endpoint and the hosted page's rounds: the checks of the client's scope (and of the `acr` asked
/// for) run on the browser's session, and a code is issued once all have succeeded.
extension OpenIDProvider {
    /// What the authorization endpoint answers.
    enum Start: Sendable, Equatable {
        /// The sign-in page, for `request` (sealed) in `session`.
        case page(OpenIDAuthorizationRequest, sealed: String, csrf: String, session: String)
        /// A redirect to the client: a code (the session's checks already succeed) or an error.
        case redirect(String, session: String?)
        /// An error shown to the user (an unknown client, an unregistered redirect URI).
        case error(status: Int, message: String)
    }

    /// The authorization endpoint (OpenID Connect Core §3.1.2): checks the request; answers at once with a code when
    /// the browser's session already satisfies it (and `prompt`, `max_age` allow), with `login_required` for
    /// `prompt=none` otherwise, or with the sign-in page.
    func start(_ parameters: [String: String], session cookie: String?) async throws -> Start {
        let now = EpochTime.nowMillis()
        let request: OpenIDAuthorizationRequest
        do {
            request = try OpenIDAuthorizationRequest.parse(parameters, clients: clients, now: now)
        } catch {
            switch error {
            case .shownToUser(let status, let message): return .error(status: status, message: message)
            case .returnedToClient(let error, let description, let redirectURI, let state):
                return .redirect(OpenIDAuthorizationRequest.redirect(redirectURI, [("error", error), ("error_description", description), ("state", state)],
                                                                     issuer: issuer), session: nil)
            }
        }
        guard let client = clients[request.clientID] else { return .error(status: 400, message: "Unknown client.") }
        var session = Self.isSession(cookie) ? cookie! : Self.newSession()
        let existing = session == cookie ? try await currentGrant(request, client: client, session: session) : nil
        var mustSignInAgain = request.prompt.contains("login")
        if let existing, let maxAge = request.maxAge, let authTime = existing.grant.authTime, now - authTime > Int64(maxAge) * 1000 {
            mustSignInAgain = true
        }
        if let existing, !mustSignInAgain {
            let location = try await issueCode(request, client: client, registration: existing.registration, grant: existing.grant, amr: existing.amr)
            return .redirect(location, session: session)
        }
        if request.prompt.contains("none") {
            return .redirect(OpenIDAuthorizationRequest.redirect(
                request.redirectURI, [("error", "login_required"), ("error_description", "The user is not signed in."), ("state", request.state)],
                issuer: issuer), session: nil)
        }
        // A sign-in asked for anew (prompt=login, max_age exceeded): a new session, whose checks have not succeeded.
        if mustSignInAgain { session = Self.newSession() }
        let seal = try seal()
        let sealed = seal.seal(request)
        return .page(request, sealed: sealed, csrf: seal.csrf(session: session, purpose: sealed), session: session)
    }

    /// What a page's round answers.
    enum Round: Sendable {
        /// The checks that ask something, each with its kind (the check's class: the page's renderer) and challenge.
        case challenges(JSONObject)
        /// The checks that refuse (a block), each with its failure.
        case failures(JSONObject)
        /// Signed in: the redirect to the client with the code; recovery codes to show first, if a check made some.
        case done(redirect: String, recoveryCodes: [String])
    }

    /// One round of the page (`POST /oidc/sign-in`): the answers, checked by the checks on the browser's session.
    ///
    /// - Throws: ``OpenIDError`` (403) for a page not sealed by this server, too old, or not of this browser's session
    ///   (CSRF).
    func round(sealed: String, csrf: String, answers: [String: JSON], session: String?, request checkRequest: CheckRequest) async throws -> Round {
        let seal = try seal()
        guard let session, Self.isSession(session), let request = seal.open(sealed, now: EpochTime.nowMillis()),
              seal.isCSRF(csrf, session: session, purpose: sealed)
        else {
            throw OpenIDError(status: 403, error: "access_denied",
                              description: "This sign-in page has expired or was opened in another browser. Go back to the application and sign in again.")
        }
        guard let client = clients[request.clientID] else { throw OpenIDError.invalidRequest("The application is no longer known here.") }
        let registration = try await ensureRegistration(session: session, address: checkRequest.remoteAddress)
        let names = client.checkNames(for: Scope(request.scope), acrValues: request.acrValues)
        let outcome = try await service.preauthorize(
            PreauthorizeRequest(clientID: registration, scope: names.sorted().joined(separator: " "), challengeResponse: answers),
            checkRequest: checkRequest)
        let application = client.application
        func kind(_ name: String) -> JSON { .string(application.checks[name].map { String(describing: type(of: $0)) } ?? "custom") }
        switch outcome.response.type {
        case .failure:
            return .failures(outcome.response.failures.reduce(into: [:]) { $0[$1.key] = ["kind": kind($1.key), "failure": $1.value] })
        case .challenge:
            return .challenges(outcome.response.challenges.reduce(into: [:]) { $0[$1.key] = ["kind": kind($1.key), "challenge": $1.value] })
        case .success, nil:
            guard let current = try await currentGrant(request, client: client, session: session) else {
                throw OpenIDError.server("The checks succeeded but grant nothing; see the server's log.")
            }
            let location = try await issueCode(request, client: client, registration: current.registration, grant: current.grant, amr: current.amr)
            var recoveryCodes: [String] = []
            for success in outcome.response.successes.values {
                if case .array(let codes)? = success.data["recoveryCodes"] { recoveryCodes += codes.compactMap(\.stringValue) }
            }
            return .done(redirect: location, recoveryCodes: recoveryCodes)
        }
    }

    /// What the session's state grants `request` now: every check of its scope and `acr` in success, and a user.
    private func currentGrant(_ request: OpenIDAuthorizationRequest, client: OpenIDClient, session: String) async throws
        -> (registration: String, grant: AuthorizationService.Grant, amr: [String])?
    {
        let registration = Self.registrationID(session: session)
        let names = client.checkNames(for: Scope(request.scope), acrValues: request.acrValues)
        let grant: AuthorizationService.Grant?
        do {
            // One store read: the registration, its state and its device's hold (a session never signed in has none).
            grant = try await service.withRegisteredClient(registration) { record, application, snapshot in
                try await service.grant(of: application, scope: Scope(elements: names), version: nil, snapshot: &snapshot)
            }
        } catch AuthorizationError.unknownClient {
            return nil
        }
        guard let grant, grant.user != nil else { return nil }
        return (registration, grant, Self.amr(of: grant.checks, in: client.application))
    }

    /// Stores a code for `grant` and returns the redirect that carries it.
    private func issueCode(_ request: OpenIDAuthorizationRequest, client: OpenIDClient, registration: String,
                           grant: AuthorizationService.Grant, amr: [String]) async throws -> String {
        let code = AuthorizationService.randomToken()
        var extra: JSONObject = ["kind": "code", "session": .string(registration), "amr": .array(amr.map(JSON.string))]
        if let nonce = request.nonce { extra["nonce"] = .string(nonce) }
        if let challenge = request.codeChallenge { extra["codeChallenge"] = .string(challenge) }
        try await store.insertCode(AuthorizationCodeRecord(
            codeHash: AuthorizationService.hash(code), clientID: client.id, scope: request.scope, redirectURI: request.redirectURI,
            expiresAt: EpochTime.nowMillis() + Self.codeLifetime, tokenExpiresAt: grant.expiresAt, checks: grant.checks, userID: grant.user,
            acr: grant.acr, authTime: grant.authTime, openID: extra))
        service.audit.record("openid.code", clientID: client.id, application: client.id, user: grant.user, detail: "scope '\(request.scope)'")
        return OpenIDAuthorizationRequest.redirect(request.redirectURI, [("code", code), ("state", request.state)], issuer: issuer)
    }
}
