public import GatehouseProtocol

/// Why a resource refused a request, with the answer of MobileFirst's resource-server table: a stable ``Code``
/// and, for an insufficient scope, the scope needed. New codes can be added without breaking a caller's code;
/// compare with the static members (`rejection == .invalidToken`) or switch over `code`.
public struct TokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the rejection is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// 401 `WWW-Authenticate: Bearer`: no token, or not a bearer header.
        public static let missing = Code(description: "invalid_request")
        /// 401 `Bearer error="invalid_token"`: bad, expired or inactive.
        public static let invalidToken = Code(description: "invalid_token")
        /// 403 `Bearer error="insufficient_scope", scope="..."`.
        public static let insufficientScope = Code(description: "insufficient_scope")
        /// 409 with `MFP-Conflict`: the authorization server asked the client to retry.
        public static let conflict = Code(description: "conflict")
        /// 401 `Bearer error="insufficient_user_authentication", acr_values="...", max_age=N, scope="..."` (RFC 9470):
        /// the token's authentication is too weak or too old.
        public static let insufficientUserAuthentication = Code(description: BearerAnswer.insufficientUserAuthentication)
    }

    public let code: Code
    /// The scope needed, for ``Code/insufficientScope``.
    public let scope: Scope?
    /// The `acr` values a token must have, for ``Code/insufficientUserAuthentication``.
    public let acrValues: [String]
    /// The most seconds since the user's authentication, for ``Code/insufficientUserAuthentication``.
    public let maxAge: Int?

    init(_ code: Code, scope: Scope? = nil, acrValues: [String] = [], maxAge: Int? = nil) {
        self.code = code
        self.scope = scope
        self.acrValues = acrValues
        self.maxAge = maxAge
    }

    /// No token, or not a bearer header.
    public static let missing = TokenRejection(.missing)
    /// A bad, expired or inactive token.
    public static let invalidToken = TokenRejection(.invalidToken)
    /// The authorization server asked the client to retry.
    public static let conflict = TokenRejection(.conflict)
    /// The token lacks `scope`.
    public static func insufficientScope(_ scope: Scope) -> TokenRejection { TokenRejection(.insufficientScope, scope: scope) }
    /// The token's authentication is too weak or too old for a resource of `scope` (RFC 9470).
    public static func insufficientUserAuthentication(acrValues: [String], maxAge: Int?, scope: Scope) -> TokenRejection {
        TokenRejection(.insufficientUserAuthentication, scope: scope, acrValues: acrValues, maxAge: maxAge)
    }

    /// The HTTP status.
    public var status: Int {
        switch code {
        case .insufficientScope: 403
        case .conflict: 409
        default: 401
        }
    }

    /// The `WWW-Authenticate` value, if any.
    public var challenge: String? {
        switch code {
        case .missing: BearerAnswer.missing
        case .insufficientScope: BearerAnswer.insufficientScope(scope ?? Scope(nil))
        case .insufficientUserAuthentication: BearerAnswer.insufficientUserAuthentication(acrValues: acrValues, maxAge: maxAge, scope: scope ?? Scope(nil))
        case .conflict: nil
        default: BearerAnswer.invalidToken
        }
    }

    public var description: String { scope.map { "\(code) (\($0))" } ?? code.description }
}
