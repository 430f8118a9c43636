import GatehouseProtocol
import HTTPTypes

extension GatehouseError {
    /// How HTTP says `error`: its status, its code in the endpoint's shape, its fields. The one mapping of the
    /// authorization service's refusals.
    ///
    /// - Parameter oauth: whether the endpoint is an OAuth one (token, introspection, revocation), whose errors take
    ///   RFC 6749 §5.2's shape and codes; the others answer MobileFirst's.
    init(_ error: AuthorizationError, oauth: Bool) {
        let message = error.description
        let style: Style = oauth ? .oauth : .mobileFirst
        func coded(_ status: HTTPResponse.Status, oauth oauthCode: String, mobileFirst code: String, headers: HTTPFields = [:]) -> GatehouseError {
            GatehouseError(status, oauth ? oauthCode : code, message, style: style, headers: headers)
        }
        self = switch error {
        case .invalidRequest: coded(.badRequest, oauth: "invalid_request", mobileFirst: "INVALID_REQUEST")
        case .unsupportedGrantType: coded(.badRequest, oauth: "unsupported_grant_type", mobileFirst: "INVALID_REQUEST")
        // RFC 6749 §4.1.2.1's code, whichever endpoint.
        case .unsupportedResponseType: GatehouseError(.badRequest, "unsupported_response_type", message, style: .oauth)
        case .invalidRedirectURI: coded(.badRequest, oauth: "invalid_request", mobileFirst: "INVALID_REDIRECT_URI")
        case .invalidGrant: coded(.badRequest, oauth: "invalid_grant", mobileFirst: "INVALID_GRANT")
        case .scopeNotAllowed: coded(.badRequest, oauth: "invalid_scope", mobileFirst: "INVALID_SCOPE")
        case .unmappedScope: coded(.badRequest, oauth: "invalid_scope", mobileFirst: "INVALID_SCOPE")
        case .invalidClientAssertion: coded(.unauthorized, oauth: "invalid_client", mobileFirst: "INVALID_CLIENT_ASSERTION")
        // OAuth's answer says no more than that the assertion's client is unknown (RFC 6749 §5.2: invalid_client).
        case .unknownClient:
            oauth ? GatehouseError(.unauthorized, "invalid_client", "client_assertion names an unknown client", style: .oauth)
                : GatehouseError(.badRequest, "INVALID_CLIENT_ID", message)
        case .invalidConfidentialClient:
            coded(.unauthorized, oauth: "invalid_client", mobileFirst: "INVALID_CLIENT", headers: [.wwwAuthenticate: "Basic realm=\"gatehouse\""])
        case .clientAuthenticationRequired: coded(.unauthorized, oauth: "invalid_client", mobileFirst: "INVALID_CLIENT")
        case .insufficientScope: coded(.forbidden, oauth: "insufficient_scope", mobileFirst: "FORBIDDEN")
        case .callerTokenRefused(let insufficientScope, let challenge, _):
            insufficientScope
                ? coded(.forbidden, oauth: "insufficient_scope", mobileFirst: "FORBIDDEN", headers: [.wwwAuthenticate: challenge])
                : coded(.unauthorized, oauth: "invalid_token", mobileFirst: "UNAUTHORIZED", headers: [.wwwAuthenticate: challenge])
        // RFC 9449 §7.1's code in OAuth's shape.
        case .invalidProof:
            coded(.unauthorized, oauth: "invalid_dpop_proof", mobileFirst: "INVALID_PROOF",
                  headers: [.wwwAuthenticate: "DPoP error=\"invalid_dpop_proof\", algs=\"RS256\""])
        case .forbidden: coded(.forbidden, oauth: "access_denied", mobileFirst: "FORBIDDEN")
        case .originNotAllowed: coded(.forbidden, oauth: "access_denied", mobileFirst: "ORIGIN_NOT_ALLOWED")
        case .applicationNotRegistered: coded(.forbidden, oauth: "access_denied", mobileFirst: "APPLICATION_NOT_REGISTERED")
        case .deviceBlocked: coded(.forbidden, oauth: "access_denied", mobileFirst: "DEVICE_BLOCKED")
        case .accessDenied: coded(.forbidden, oauth: "access_denied", mobileFirst: "ACCESS_DENIED")
        case .unknownSecurityCheck: coded(.badRequest, oauth: "invalid_request", mobileFirst: "INVALID_SECURITY_CHECK")
        case .conflict:
            coded(.conflict, oauth: "temporarily_unavailable", mobileFirst: "CONFLICT", headers: [HTTPField.Name(ProtocolNames.conflictHeader)!: "true"])
        }
    }
}
