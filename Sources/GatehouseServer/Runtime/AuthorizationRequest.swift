public import GatehouseProtocol

/// A request of `az/v1/authorization` (RFC 6749 §4.1.1): a code for a scope whose checks have all succeeded. Its
/// parameters as given; ``AuthorizationService/authorize(_:host:)`` checks them.
public struct AuthorizationRequest: Sendable, Hashable {
    /// `response_type` (only `code` is answered).
    public var responseType: String?
    /// `client_id`.
    public var clientID: String?
    /// `scope`.
    public var scope: Scope
    /// `redirect_uri`.
    public var redirectURI: String?

    public init(responseType: String?, clientID: String?, scope: Scope, redirectURI: String?) {
        self.responseType = responseType
        self.clientID = clientID
        self.scope = scope
        self.redirectURI = redirectURI
    }
}
