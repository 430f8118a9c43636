import GatehouseHTTP

/// A realm: how requests are challenged and which login modules check the answers.
public struct RealmConfiguration: Sendable, Codable {
    public var name: String
    /// Sent as `realm="<description>"` in the challenge (the name when absent).
    public var description: String?
    public var scheme: ChallengeScheme
    /// Headers that may carry the credentials besides `Authorization` (never forwarded upstream).
    public var headers: [String]?
    /// Query parameters that may carry the credentials (a browser's WebSocket cannot set headers); removed from
    /// the query before it is forwarded upstream.
    public var queryParameters: [String]?
    /// Cookies that may carry the credentials; removed from `Cookie` before it is forwarded upstream.
    public var cookies: [String]?
    /// Seconds after which an authenticated WebSocket must authenticate again: it is closed, or revalidated in
    /// band when `revalidate` is set.
    public var authorizationTimeout: Double?
    /// Whether a WebSocket whose credentials expire (token expiry, authorization timeout) is challenged again in
    /// band instead of being closed; the client's challenge handler answers without dropping the connection.
    public var revalidate: Bool?
    /// Seconds the client has to answer an in-band challenge (30 by default).
    public var revalidationGrace: Double?
    /// Seconds an authenticated WebSocket may live at most.
    public var sessionTimeout: Double?
    public var loginModules: [LoginModuleConfiguration]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, scheme, headers, queryParameters, cookies, authorizationTimeout, revalidate, revalidationGrace,
             sessionTimeout, loginModules
    }

    public init(name: String, description: String? = nil, scheme: ChallengeScheme, headers: [String]? = nil, queryParameters: [String]? = nil,
                cookies: [String]? = nil, authorizationTimeout: Double? = nil, sessionTimeout: Double? = nil,
                loginModules: [LoginModuleConfiguration] = []) {
        self.name = name
        self.description = description
        self.scheme = scheme
        self.headers = headers
        self.queryParameters = queryParameters
        self.cookies = cookies
        self.authorizationTimeout = authorizationTimeout
        self.sessionTimeout = sessionTimeout
        self.loginModules = loginModules
    }
}

/// One login module of a realm's chain.
public struct LoginModuleConfiguration: Sendable, Codable {
    /// `users` (bcrypt users, inline or from `usersFile`), `gatehouse-token` (JWKS or introspection), `kerberos5`
    /// (SPNEGO tokens of `Negotiate` realms, checked with `keytab`: ``NegotiateLoginModule``), or the name of
    /// a custom module passed to `Gateway/init(configuration:customModules:logger:)`.
    public var type: String
    public var flag: LoginModuleFlag
    public var users: [GatewayUser]?
    /// A YAML file holding a list of users (`username`, `passwordHash`, `roles`).
    public var usersFile: String?
    /// `gatehouse-token`: the server's key set, for local verification.
    public var jwksURL: String?
    /// `gatehouse-token`: introspection instead of JWKS.
    public var introspection: IntrospectionConfiguration?
    /// `gatehouse-token`: scope elements every token must hold.
    public var requiredScope: String?
    /// `gatehouse-token`: the authentication context classes accepted (RFC 9470's `acr`, any one of them): a token
    /// whose checks proved none of them fails (step-up).
    public var acrValues: [String]?
    /// `gatehouse-token`: the most seconds since the token's user authenticated (its `auth_time`).
    public var maxAge: Int?
    /// `kerberos5`: the keytab with the service's keys (MIT's default keytab when absent).
    public var keytab: String?
    /// `kerberos5`: the only service principal accepted, e.g. `HTTP/gateway.example.com@EXAMPLE.COM` (any key of
    /// the keytab when absent).
    public var servicePrincipal: String?
    /// `kerberos5`: roles by client principal (`alice@EXAMPLE.COM`), by its name without the realm (`alice`), or
    /// `*` for every other principal.
    public var principalRoles: [String: [String]]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, flag, users, usersFile, jwksURL, introspection, requiredScope, acrValues, maxAge, keytab, servicePrincipal, principalRoles
    }

    /// The keys a login module may hold (``GatewayConfiguration/yamlKeys``).
    static let yamlKeys: YAMLKeys = .mapping(CodingKeys.self, [
        .users: .list(GatewayUser.yamlKeys),
        .introspection: .mapping(IntrospectionConfiguration.CodingKeys.self),
        .principalRoles: .entries(.any),
    ])

    public init(type: String, flag: LoginModuleFlag = .required, users: [GatewayUser]? = nil, usersFile: String? = nil, jwksURL: String? = nil,
                introspection: IntrospectionConfiguration? = nil, requiredScope: String? = nil, keytab: String? = nil,
                servicePrincipal: String? = nil, principalRoles: [String: [String]]? = nil) {
        self.type = type
        self.flag = flag
        self.users = users
        self.usersFile = usersFile
        self.jwksURL = jwksURL
        self.introspection = introspection
        self.requiredScope = requiredScope
        self.keytab = keytab
        self.servicePrincipal = servicePrincipal
        self.principalRoles = principalRoles
    }
}

/// A confidential client allowed to introspect tokens at Gatehouse.
public struct IntrospectionConfiguration: Sendable, Codable {
    public var serverURL: String
    public var clientID: String
    public var secret: String

    enum CodingKeys: String, CodingKey, CaseIterable { case serverURL, clientID, secret }

    public init(serverURL: String, clientID: String, secret: String) {
        self.serverURL = serverURL
        self.clientID = clientID
        self.secret = secret
    }
}
