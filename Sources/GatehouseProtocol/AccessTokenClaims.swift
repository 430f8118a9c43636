public import Foundation

/// The claims of a Gatehouse access token: a JWS (ES256) the authorization server signs and resource servers
/// verify against its key set (`/.well-known/jwks.json`).
///
/// `scope` is the granted scope without the application's mandatory elements; `checks` names the checks whose
/// success granted it, so that a resource server (or the server's revocation list) can tell whether they still do.
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    /// The issuer: the server's public base URL.
    public var iss: String
    /// The active user's id, or the client's id.
    public var sub: String
    /// Expiry, epoch seconds.
    public var exp: Int64
    /// Issued at, epoch seconds.
    public var iat: Int64
    /// Issued at, epoch milliseconds: revocations compare with it.
    public var iat_ms: Int64
    /// The token's unique id (revocation of one token names it).
    public var jti: String
    public var scope: String
    public var client_id: String
    /// The application, as the client registered it: `{"id":..,"clientPlatform":..,"version":..}`; absent for
    /// confidential clients.
    public var app: ApplicationData?
    /// The security checks whose success granted the scope.
    public var checks: [String]
    /// The active user's id, if a check authenticated one.
    public var user: String?
    /// What the token is bound to (RFC 8705 §3): the client's TLS certificate, whose holder alone may use it.
    public var cnf: Confirmation?
    /// The authentication context class the granting checks proved (RFC 9470, OpenID Connect's `acr`): the policy's
    /// `acr` of the strongest of ``checks``; absent when none declares one.
    public var acr: String?
    /// When the user authenticated, epoch seconds (OpenID Connect's `auth_time`): the login of ``user``.
    public var auth_time: Int64?

    /// A token's confirmation claim (RFC 7800): here only RFC 8705's certificate thumbprint.
    public struct Confirmation: Codable, Sendable, Equatable {
        /// The base64url SHA-256 of the client certificate's DER (``CertificateThumbprint``).
        public var x5tS256: String?
        public init(x5tS256: String?) { self.x5tS256 = x5tS256 }
        enum CodingKeys: String, CodingKey { case x5tS256 = "x5t#S256" }
    }

    public init(iss: String, sub: String, exp: Int64, iat: Int64, iat_ms: Int64, jti: String, scope: String, client_id: String,
                app: ApplicationData?, checks: [String], user: String?, cnf: Confirmation? = nil, acr: String? = nil, auth_time: Int64? = nil) {
        self.iss = iss
        self.sub = sub
        self.exp = exp
        self.iat = iat
        self.iat_ms = iat_ms
        self.jti = jti
        self.scope = scope
        self.client_id = client_id
        self.app = app
        self.checks = checks
        self.user = user
        self.cnf = cnf
        self.acr = acr
        self.auth_time = auth_time
    }

    /// When the token expires.
    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(exp)) }

    /// Whether the token has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool { expiresAt <= now }
}

extension AccessTokenClaims: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { claims in
            claims.member("iss", iss)
            claims.member("sub", sub)
            claims.member("exp", exp)
            claims.member("iat", iat)
            claims.member("iat_ms", iat_ms)
            claims.member("jti", jti)
            claims.member("scope", scope)
            claims.member("client_id", client_id)
            if let app {
                claims.member("app") { object in
                    object.member("id", app.id)
                    object.member("clientPlatform", app.clientPlatform)
                    object.member("version", app.version)
                }
            }
            claims.member("checks", checks)
            claims.member("user", user)
            claims.member("acr", acr)
            claims.member("auth_time", auth_time)
            if let thumbprint = cnf?.x5tS256 {
                claims.member("cnf") { object in object.member("x5t#S256", thumbprint) }
            }
        }
    }
}
