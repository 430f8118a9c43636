import GatehouseProtocol

/// Why a resource refused a request, with the answer of the MobileFirst resource-server table.
public enum TokenRejection: Error, Sendable, Equatable {
    /// 401 `WWW-Authenticate: Bearer`: no token, or not a bearer header.
    case missing
    /// 401 `Bearer error="invalid_token"`: bad, expired or inactive.
    case invalidToken
    /// 403 `Bearer error="insufficient_scope", scope="..."`.
    case insufficientScope(Scope)
    /// 409 with `MFP-Conflict`: the authorization server asked the client to retry.
    case conflict

    /// The HTTP status.
    public var status: Int {
        switch self {
        case .missing, .invalidToken: 401
        case .insufficientScope: 403
        case .conflict: 409
        }
    }

    /// The `WWW-Authenticate` value, if any.
    public var challenge: String? {
        switch self {
        case .missing: BearerAnswer.missing
        case .invalidToken: BearerAnswer.invalidToken
        case .insufficientScope(let scope): BearerAnswer.insufficientScope(scope)
        case .conflict: nil
        }
    }
}
