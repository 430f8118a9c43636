/// The `WWW-Authenticate` values of a protected resource (MobileFirst Developer Center, “Protecting external resources”, RFC 6750 §3), written once for the
/// server's adapters and the resource-server middleware alike.
public enum BearerAnswer {
    /// No token, or not a bearer header: 401.
    public static let missing = "Bearer"
    /// A bad, expired or revoked token: 401.
    public static let invalidToken = #"Bearer error="invalid_token""#

    /// The token lacks `scope`: 403.
    public static func insufficientScope(_ scope: Scope) -> String {
        #"Bearer error="insufficient_scope", scope=""# + scope.normalized + #"""#
    }

    /// The error code of RFC 9470 (step-up authentication).
    public static let insufficientUserAuthentication = "insufficient_user_authentication"

    /// The token's authentication is too weak (its `acr` not one of `acrValues`) or too old (its `auth_time` more than
    /// `maxAge` seconds ago): 401 (RFC 9470 §3), with the scope whose token proves enough (Gatehouse's addition, so
    /// that a client knows which scope to obtain).
    public static func insufficientUserAuthentication(acrValues: [String], maxAge: Int?, scope: Scope) -> String {
        var answer = #"Bearer error="insufficient_user_authentication", error_description="A stronger or more recent authentication is required""#
        if !acrValues.isEmpty { answer += #", acr_values=""# + acrValues.joined(separator: " ") + #"""# }
        if let maxAge { answer += ", max_age=\(maxAge)" }
        if !scope.normalized.isEmpty { answer += #", scope=""# + scope.normalized + #"""# }
        return answer
    }
}
