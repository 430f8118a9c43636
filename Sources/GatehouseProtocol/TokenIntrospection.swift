/// The answer of the introspection endpoint (`POST /mfp/api/az/v1/introspection`, RFC 7662 with MobileFirst's
/// `mfp-*` members): what a valid token grants, or only `{"active":false}`.
///
/// Times are epoch milliseconds, as MobileFirst's. The `mfp-*` members are present (possibly `null`) in every
/// active answer.
public struct TokenIntrospection: Codable, Sendable, Equatable {
    public var active: Bool
    public var scope: String?
    public var clientID: String?
    /// Expiry, epoch ms.
    public var exp: Int64?
    /// Issued at, epoch ms.
    public var iat: Int64?
    public var sub: String?
    public var iss: String?
    public var jti: String?
    public var tokenType: String?
    /// The active user's name, or `anonymous`.
    public var username: String?
    /// `{"id","clientPlatform","version"}` of the client's application; `null` for confidential clients.
    public var application: JSON?
    /// `{"id","hardware","platform","deviceDisplayName","status"}` of the client's device.
    public var device: JSON?
    /// The active user (`{"id","displayName","authenticatedBy","attributes"}`), if the token was granted to one.
    public var user: JSON?
    /// The checks that granted the token, by name.
    public var checks: [String: JSON]?
    /// The token's confirmation (RFC 8705 §3.2): `{"x5t#S256": …}` when it is bound to a TLS client certificate, which
    /// the resource server must then see presented.
    public var cnf: JSON?
    /// The token's authentication context class (RFC 9470), when its checks proved one.
    public var acr: String?
    /// When the token's user authenticated, epoch seconds (RFC 9470's `auth_time`).
    public var authTime: Int64?

    /// The answer for anything that is not a valid token now.
    public static let inactive = TokenIntrospection(active: false)

    /// The bound certificate's thumbprint, when ``cnf`` names one.
    public var certificateThumbprint: String? { cnf?["x5t#S256"]?.stringValue }

    public init(active: Bool, scope: String? = nil, clientID: String? = nil, exp: Int64? = nil, iat: Int64? = nil, sub: String? = nil,
                iss: String? = nil, jti: String? = nil, tokenType: String? = nil, username: String? = nil, application: JSON? = nil,
                device: JSON? = nil, user: JSON? = nil, checks: [String: JSON]? = nil) {
        self.active = active
        self.scope = scope
        self.clientID = clientID
        self.exp = exp
        self.iat = iat
        self.sub = sub
        self.iss = iss
        self.jti = jti
        self.tokenType = tokenType
        self.username = username
        self.application = application
        self.device = device
        self.user = user
        self.checks = checks
    }

    enum CodingKeys: String, CodingKey {
        case active, scope, exp, iat, sub, iss, jti, username, cnf, acr
        case clientID = "client_id", tokenType = "token_type", authTime = "auth_time"
        case application = "mfp-application", device = "mfp-device", user = "mfp-user", checks = "mfp-checks"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(active, forKey: .active)
        guard active else { return }
        try container.encodeIfPresent(acr, forKey: .acr)
        try container.encodeIfPresent(authTime, forKey: .authTime)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(clientID, forKey: .clientID)
        try container.encodeIfPresent(cnf, forKey: .cnf)
        try container.encodeIfPresent(exp, forKey: .exp)
        try container.encodeIfPresent(iat, forKey: .iat)
        try container.encodeIfPresent(sub, forKey: .sub)
        try container.encodeIfPresent(iss, forKey: .iss)
        try container.encodeIfPresent(jti, forKey: .jti)
        try container.encodeIfPresent(tokenType, forKey: .tokenType)
        try container.encodeIfPresent(username, forKey: .username)
        // MobileFirst's members are always there in an active answer, `null` when there is nothing to say.
        try container.encode(application ?? .null, forKey: .application)
        try container.encode(device ?? .null, forKey: .device)
        try container.encode(user ?? .null, forKey: .user)
        try container.encode(checks ?? [:], forKey: .checks)
    }
}

extension TokenIntrospection: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { answer in
            // Sorted by the coded names, as `encode(to:)` writes them through the sorted encoder.
            if active { answer.member("acr", acr) }
            answer.member("active", active)
            guard active else { return }
            answer.member("auth_time", authTime)
            answer.member("client_id", clientID)
            if let cnf { answer.member("cnf", json: cnf) }
            answer.member("exp", exp)
            answer.member("iat", iat)
            answer.member("iss", iss)
            answer.member("jti", jti)
            answer.member("mfp-application", json: application ?? .null)
            answer.member("mfp-checks", members: checks ?? [:])
            answer.member("mfp-device", json: device ?? .null)
            answer.member("mfp-user", json: user ?? .null)
            answer.member("scope", scope)
            answer.member("sub", sub)
            answer.member("token_type", tokenType)
            answer.member("username", username)
        }
    }
}
