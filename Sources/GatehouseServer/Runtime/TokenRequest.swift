public import GatehouseProtocol

/// A request of `az/v1/token`: which grant, with what (RFC 6749 §4.1.3 and §4.4).
public enum TokenRequest: Sendable, Hashable {
    /// The authorization-code grant of a MobileFirst client, authenticated by its client assertion.
    case authorizationCode(AuthorizationCodeGrant)
    /// The client-credentials grant of a confidential client.
    case clientCredentials(ClientCredentialsGrant)

    /// An authorization code to exchange for a token.
    public struct AuthorizationCodeGrant: Sendable, Hashable {
        /// The code the authorization endpoint issued (never empty).
        public var code: String
        /// The `redirect_uri` the code was issued for, if given (it must be).
        public var redirectURI: String?
        /// The `client_id`, if given (it must then be the assertion's).
        public var clientID: String?
        /// The client's assertion, whose `jti` is the code.
        public var assertion: ClientAssertion

        public init(code: String, redirectURI: String?, clientID: String?, assertion: ClientAssertion) {
            self.code = code
            self.redirectURI = redirectURI
            self.clientID = clientID
            self.assertion = assertion
        }
    }

    /// A confidential client's request for a token of its own.
    public struct ClientCredentialsGrant: Sendable, Hashable {
        /// The scope asked for.
        public var scope: Scope
        /// How the client authenticates.
        public var authentication: ConfidentialClientAuthentication

        public init(scope: Scope, authentication: ConfidentialClientAuthentication) {
            self.scope = scope
            self.authentication = authentication
        }
    }
}

/// How a confidential client authenticates.
public enum ConfidentialClientAuthentication: Sendable, Hashable {
    /// HTTP Basic (RFC 6749 §2.3.1): the `Authorization` field's value, if the request has one.
    case basic(String?)
    /// Its TLS client certificate (RFC 8705 §2): the client's id; the certificate is the connection's.
    case certificate(clientID: String)
}
