import Foundation
import GatehouseHTTP
import HTTPTypes

/// A realm at run time: extracts credentials from a request, runs the login chain and decides.
public final class Realm: Sendable {
    public let name: String
    public let description: String
    public let scheme: ChallengeScheme
    public let headers: [String]
    public let queryParameters: [String]
    public let cookies: [String]
    public let authorizationTimeout: Duration?
    public let sessionTimeout: Duration?
    /// Whether expiring WebSockets are challenged again in band instead of closed.
    public let revalidate: Bool
    /// How long an in-band challenge may stay unanswered.
    public let revalidationGrace: Duration
    public let chain: LoginChain

    public init(name: String, description: String? = nil, scheme: ChallengeScheme, headers: [String] = [], queryParameters: [String] = [],
                cookies: [String] = [], authorizationTimeout: Duration? = nil, sessionTimeout: Duration? = nil,
                revalidate: Bool = false, revalidationGrace: Duration = .seconds(30), chain: LoginChain) {
        self.name = name
        self.description = description ?? name
        self.scheme = scheme
        self.headers = headers
        self.queryParameters = queryParameters
        self.cookies = cookies
        self.authorizationTimeout = authorizationTimeout
        self.sessionTimeout = sessionTimeout
        self.revalidate = revalidate
        self.revalidationGrace = revalidationGrace
        self.chain = chain
    }

    /// The `WWW-Authenticate` value.
    public var challenge: String { scheme.challenge(realmDescription: description) }

    /// The credentials in a request's header fields and its checked query.
    func credentials(headers requestHeaders: HTTPFields, query: String?) -> Credentials {
        let (scheme, value) = Credentials.parseAuthorization(requestHeaders.value(of: .authorization))
        var named: [String: String] = [:]
        for header in headers {
            if let name = HTTPField.Name(header), let value = requestHeaders[name], !value.isEmpty { named[header] = value }
        }
        if !queryParameters.isEmpty {
            let parameters = CredentialCarriers.parameters(of: query)
            for parameter in queryParameters {
                if let value = parameters.first(where: { $0.name == parameter })?.value, !value.isEmpty { named[parameter] = value }
            }
        }
        if !cookies.isEmpty {
            let pairs = CredentialCarriers.cookies(requestHeaders[values: .cookie])
            for cookie in cookies {
                if let value = pairs.first(where: { $0.name == cookie })?.value, !value.isEmpty { named[cookie] = value }
            }
        }
        return Credentials(scheme: scheme, value: value, named: named)
    }

    /// What the gateway does with a request for a service of this realm.
    public enum Decision: Sendable, Equatable {
        /// Let it through.
        case allow(Subject)
        /// 401 with the realm's challenge: no credentials, wrong ones, or a different scheme.
        case challenge(reason: String)
        /// 403: authenticated, but without a required role.
        case forbidden(Subject)
        /// 503 with `Retry-After`: the chain could not decide now (``LoginResult/unavailable(_:)``).
        case unavailable(reason: String)
        /// 429 with `Retry-After`: the client's address is refused for a while (``LoginResult/throttled(_:retryAfter:)``).
        case throttled(reason: String, retryAfter: Int)
    }

    /// Authenticates `credentials` and checks `requiredRoles` (KAAZING `HttpLoginSecurityFilter`'s decision table).
    public func decide(_ credentials: Credentials, requiredRoles: [String]) async -> Decision {
        if let refused = refusal(of: credentials) { return refused }
        return decision(await chain.login(credentials, scheme: scheme), requiredRoles: requiredRoles)
    }

    /// ``decide(_:requiredRoles:)`` when the login chain can answer without suspending
    /// (``LoginChain/cachedLogin(_:scheme:)``), else `nil`.
    public func decideNow(_ credentials: Credentials, requiredRoles: [String]) -> Decision? {
        decideRemembering(credentials, requiredRoles: requiredRoles)?.decision
    }

    /// ``decideNow(_:requiredRoles:)``, and for an `allow`, until when it holds for the same credentials as long as
    /// no password fails meanwhile (``LoginChain/rememberedLogin(_:scheme:)``) and its subject has not expired.
    func decideRemembering(_ credentials: Credentials, requiredRoles: [String]) -> (decision: Decision, until: ContinuousClock.Instant?)? {
        if let refused = refusal(of: credentials) { return (refused, nil) }
        guard let (outcome, until) = chain.rememberedLogin(credentials, scheme: scheme) else { return nil }
        let decision = decision(outcome, requiredRoles: requiredRoles)
        guard case .allow = decision else { return (decision, nil) }
        return (decision, until)
    }

    /// Whether a request's credentials for this realm are its `Authorization` header alone (no credential headers,
    /// query parameters or cookies declared).
    var readsAuthorizationOnly: Bool { headers.isEmpty && queryParameters.isEmpty && cookies.isEmpty }

    /// The challenge for credentials the chain never sees: none, or only an `Authorization` of another scheme.
    private func refusal(of credentials: Credentials) -> Decision? {
        if credentials.isEmpty { return .challenge(reason: "no credentials") }
        // An `Authorization` header with another scheme and no other credentials is no answer to this realm's
        // challenge (a browser's cached `Basic` sent to a token realm): challenge again rather than refuse.
        if credentials.named.isEmpty, let given = credentials.scheme,
           !HeaderText.equalsIgnoringCase(given, scheme.baseScheme),
           !(scheme == .applicationToken && HeaderText.equalsIgnoringCase(given, "Bearer")) {
            return .challenge(reason: "scheme \(given) instead of \(scheme.baseScheme)")
        }
        return nil
    }

    /// The decision for the chain's outcome: expiry, then the required roles.
    private func decision(_ outcome: LoginChain.Outcome, requiredRoles: [String]) -> Decision {
        switch outcome {
        case .failed(let reason):
            return .challenge(reason: reason)
        case .unavailable(let reason):
            return .unavailable(reason: reason)
        case .throttled(let reason, let retryAfter):
            return .throttled(reason: reason, retryAfter: retryAfter)
        case .authenticated(let subject):
            if let expiry = subject.expiresAt, expiry <= Date() { return .challenge(reason: "credentials expired") }
            return subject.satisfies(requiredRoles.isEmpty ? ["*"] : requiredRoles) ? .allow(subject) : .forbidden(subject)
        }
    }

    /// The 401 answer.
    func challengeAnswer() -> GatewayAnswer {
        GatewayAnswer.unauthorized(challenge: challenge)
    }

    /// The 403 answer.
    static func forbiddenAnswer() -> GatewayAnswer {
        GatewayAnswer.forbidden
    }
}
