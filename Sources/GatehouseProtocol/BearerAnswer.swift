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
}
