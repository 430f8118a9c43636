import GatehouseProtocol

/// Why the authorization server refused a request, in the service's terms: what was wrong, not how HTTP says it.
///
/// One place gives each refusal its status, its code in the endpoint's error shape (MobileFirst's
/// `{"errorCode","errorMsg"}` or OAuth's `{"error","error_description"}`) and its fields:
/// `GatehouseError.init(_:oauth:)`.
public enum AuthorizationError: Error, Sendable, Hashable {
    /// A parameter is missing or malformed (the message names it).
    case invalidRequest(String)
    /// `grant_type` names a grant this server does not issue.
    case unsupportedGrantType(String)
    /// `response_type` is not `code`.
    case unsupportedResponseType
    /// `redirect_uri` is missing or not one this client may use.
    case invalidRedirectURI
    /// The authorization code does not hold (unknown, used, expired, another client's, another redirect).
    case invalidGrant(String)
    /// A confidential client asked for a scope it may not have.
    case scopeNotAllowed(String)
    /// A scope element maps to no security check of the application.
    case unmappedScope(String)
    /// The client assertion does not hold (its signature, window, audience, reuse…).
    case invalidClientAssertion(String)
    /// No client is registered with this id.
    case unknownClient(String)
    /// An unknown confidential client, or a wrong secret.
    case invalidConfidentialClient
    /// The caller did not authenticate as the endpoint needs (the message says how it may).
    case clientAuthenticationRequired(String)
    /// The authenticated caller may not use the endpoint (the message says why).
    case insufficientScope(String)
    /// The caller's bearer token does not hold: invalid, or without the scope the endpoint needs. `challenge` is
    /// the `WWW-Authenticate` value that says so (RFC 6750 §3).
    case callerTokenRefused(insufficientScope: Bool, challenge: String, message: String)
    /// The proof of possession of the client's key (a DPoP-style proof) does not hold.
    case invalidProof(String)
    /// The request is one the client may not make (the message says why).
    case forbidden(String)
    /// A web page's origin may not register for the application.
    case originNotAllowed(String)
    /// The client's application (with its platform and version) is not in the policy.
    case applicationNotRegistered(String)
    /// An operator blocked the client's device, or its application on it.
    case deviceBlocked(String)
    /// The scope's checks have not all succeeded.
    case accessDenied(String)
    /// No security check has this name in the client's application.
    case unknownSecurityCheck(String)
    /// The client's state changed meanwhile, more often than a round is tried again.
    case conflict
}

extension AuthorizationError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidRequest(let message), .invalidGrant(let message), .scopeNotAllowed(let message), .unmappedScope(let message),
             .invalidClientAssertion(let message), .clientAuthenticationRequired(let message), .insufficientScope(let message),
             .callerTokenRefused(_, _, let message), .invalidProof(let message), .forbidden(let message), .originNotAllowed(let message),
             .applicationNotRegistered(let message), .deviceBlocked(let message), .accessDenied(let message):
            message
        case .unsupportedGrantType(let grant): "grant_type '\(grant.prefix(64))' is not supported"
        case .unsupportedResponseType: "response_type must be code"
        case .invalidRedirectURI: "redirect_uri is missing or not allowed for this client."
        case .unknownClient(let clientID): "Unknown client id '\(clientID.prefix(64))'. Register the client again."
        case .invalidConfidentialClient: "Unknown confidential client or wrong secret."
        case .unknownSecurityCheck(let name): "Unknown security check '\(name.prefix(64))'."
        case .conflict: "The client's state changed meanwhile; send the request again."
        }
    }
}
