/// A request of `az/v1/introspection` (RFC 7662) or `az/v1/revoke` (RFC 7009): the token it is about and the
/// caller's credentials.
public struct TokenManagementRequest: Sendable, Hashable {
    /// The token asked about (empty when not given, which the endpoint refuses once the caller is authenticated).
    public var token: String
    /// The caller's `Authorization` value: HTTP Basic of a confidential client, or a bearer token.
    public var authorization: String?
    /// The caller's client assertion (revocation by a MobileFirst client).
    public var assertion: ClientAssertion

    public init(token: String, authorization: String?, assertion: ClientAssertion) {
        self.token = token
        self.authorization = authorization
        self.assertion = assertion
    }
}
