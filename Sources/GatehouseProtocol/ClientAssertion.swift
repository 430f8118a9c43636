/// The claims of a client-assertion JWT (as the MobileFirst SDKs sign it: `WLOAuthCertManager`, `ibmmfpf.js`): the client proves it holds its registered key.
///
/// Times are epoch **milliseconds**, as MobileFirst clients send them.
public struct ClientAssertionClaims: Codable, Sendable, Equatable {
    /// `"<appId>$<platform>[$<version>]"`.
    public var iss: String?
    /// The client id.
    public var sub: String?
    /// The token endpoint for a token request; `null` for logout and heartbeat.
    public var aud: String?
    /// Issued at, ms (server-relative time).
    public var iat: Int64?
    /// Expires at, ms; `iat + 60000` in MobileFirst clients.
    public var exp: Int64?
    /// The authorization code for a token request.
    public var jti: String?

    public init(iss: String?, sub: String?, aud: String?, iat: Int64?, exp: Int64?, jti: String?) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.iat = iat
        self.exp = exp
        self.jti = jti
    }

    /// The assertion type that accompanies `client_assertion` in forms.
    public static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
}

extension ClientAssertionClaims: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let iss = json.optionalString("iss"), let sub = json.optionalString("sub"), let aud = json.optionalString("aud"),
              let iat = json.optionalInt("iat"), let exp = json.optionalInt("exp"), let jti = json.optionalString("jti")
        else { return nil }
        self.init(iss: iss, sub: sub, aud: aud, iat: iat, exp: exp, jti: jti)
    }
}
