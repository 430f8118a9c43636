import GatehouseChecks
import Foundation
import GatehouseHTTP
import Yams

/// The gateway's configuration: where it listens, its realms and its services. Loaded from YAML
/// (``load(path:)``) or built in Swift.
///
/// ```yaml
/// host: 127.0.0.1
/// port: 8090
/// trustedProxies: [10.0.0.0/8]           # peers whose X-Forwarded-* / Forwarded are kept (none by default)
/// headerReadTimeout: 10                  # seconds for a new connection's first request head
/// idleTimeout: 60                        # seconds a keep-alive connection may sit idle or stall
/// upstreamReadTimeout: 120               # seconds an upstream may stay silent while an answer is awaited or streamed
/// realms:
///   - name: demo
///     description: Demo realm
///     scheme: Application Basic          # Basic | Application Basic | Application Token | Bearer | Negotiate | Application Negotiate
///     queryParameters: [access_token]    # also headers: [...], cookies: [...]
///     authorizationTimeout: 1800         # seconds; WebSockets are closed after it, or
///     revalidate: true                   # challenged again in band, without dropping the connection
///     loginModules:
///       - { type: users, flag: required, usersFile: users.yaml }
///       - { type: gatehouse-token, flag: sufficient, jwksURL: "http://127.0.0.1:8080/.well-known/jwks.json" }
///   - name: kerberos
///     scheme: Negotiate                  # RFC 4559 SPNEGO; clients answer from their Kerberos ticket
///     loginModules:
///       - type: kerberos5
///         flag: required
///         keytab: /etc/gatehouse/http.keytab
///         servicePrincipal: HTTP/gateway.example.com@EXAMPLE.COM
///         principalRoles: { alice@EXAMPLE.COM: [AUTHORIZED], "*": [] }
/// services:
///   - { name: echo, path: /echo, upstream: "http://127.0.0.1:9000/echo", realm: demo, requireRoles: [AUTHORIZED], webSocket: true }
/// ```
public struct GatewayConfiguration: Sendable, Codable {
    public var host: String
    public var port: Int
    public var realms: [RealmConfiguration]
    public var services: [ServiceConfiguration]
    /// The largest WebSocket message relayed, in bytes.
    public var maxWebSocketMessageSize: Int?
    /// Addresses or CIDR blocks of proxies in front of the gateway whose `X-Forwarded-*` and `Forwarded` fields are
    /// kept (and appended to); every other client's are replaced by the gateway's own (see ``TrustedProxies``).
    public var trustedProxies: [String]?
    /// Seconds a new connection has to send its first complete request head (10 by default).
    public var headerReadTimeout: Double?
    /// Seconds a keep-alive connection may sit idle between requests, or stall in a later request's head or body,
    /// before it is closed (60 by default).
    public var idleTimeout: Double?
    /// Seconds an upstream may stay silent while its answer is awaited or streamed before its connection is closed
    /// (`504` if nothing of the answer was sent yet, and the request is not sent again; else the client's connection
    /// ends; 120 by default).
    public var upstreamReadTimeout: Double?
    /// Per-account lockout of the `users` login modules (failed passwords per user name, in this process); the
    /// server's defaults when absent.
    public var accountLockout: AccountLockoutSettings?
    /// Serve `https`/`wss` with this certificate chain and key (PEM files, read again on SIGHUP).
    public var tls: TLSFiles?
    /// CA certificates (PEM) that `https`/`wss` upstreams are verified against, instead of the system's roots.
    public var upstreamCAFile: String?

    /// A certificate chain and its private key.
    public struct TLSFiles: Sendable, Codable {
        public var certificate: String
        public var key: String
        enum CodingKeys: String, CodingKey, CaseIterable { case certificate, key }
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The default ``headerReadTimeout``, in seconds.
    public static let defaultHeaderReadTimeout: Double = 10
    /// The default ``idleTimeout``, in seconds.
    public static let defaultIdleTimeout: Double = 60
    /// The default ``upstreamReadTimeout``, in seconds.
    public static let defaultUpstreamReadTimeout: Double = 120

    public init(host: String = "127.0.0.1", port: Int = 8090, realms: [RealmConfiguration] = [], services: [ServiceConfiguration] = [],
                maxWebSocketMessageSize: Int? = nil, trustedProxies: [String]? = nil, headerReadTimeout: Double? = nil,
                idleTimeout: Double? = nil, upstreamReadTimeout: Double? = nil) {
        self.host = host
        self.port = port
        self.realms = realms
        self.services = services
        self.maxWebSocketMessageSize = maxWebSocketMessageSize
        self.trustedProxies = trustedProxies
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.upstreamReadTimeout = upstreamReadTimeout
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, realms, services, maxWebSocketMessageSize, trustedProxies, headerReadTimeout, idleTimeout, upstreamReadTimeout, accountLockout, tls,
             upstreamCAFile
    }

    /// Decodes a configuration; every key may be left out (`127.0.0.1:8090`, no realms, no services).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? "127.0.0.1"
        port = try container.decodeIfPresent(Int.self, forKey: .port) ?? 8090
        realms = try container.decodeIfPresent([RealmConfiguration].self, forKey: .realms) ?? []
        services = try container.decodeIfPresent([ServiceConfiguration].self, forKey: .services) ?? []
        maxWebSocketMessageSize = try container.decodeIfPresent(Int.self, forKey: .maxWebSocketMessageSize)
        trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies)
        headerReadTimeout = try container.decodeIfPresent(Double.self, forKey: .headerReadTimeout)
        idleTimeout = try container.decodeIfPresent(Double.self, forKey: .idleTimeout)
        upstreamReadTimeout = try container.decodeIfPresent(Double.self, forKey: .upstreamReadTimeout)
        accountLockout = try container.decodeIfPresent(AccountLockoutSettings.self, forKey: .accountLockout)
        tls = try container.decodeIfPresent(TLSFiles.self, forKey: .tls)
        upstreamCAFile = try container.decodeIfPresent(String.self, forKey: .upstreamCAFile)
    }

    /// Decodes YAML; relative `usersFile` paths are resolved against `baseDirectory`.
    public static func decode(yaml: String, baseDirectory: String? = nil) throws -> GatewayConfiguration {
        if let unknown = yamlKeys.unknownKey(in: yaml) {
            throw GatewayConfigurationError("'\(unknown.path)' is not a key of the gateway's configuration (known there: \(unknown.known.joined(separator: ", ")))")
        }
        var configuration: GatewayConfiguration
        do {
            configuration = try YAMLDecoder().decode(GatewayConfiguration.self, from: yaml)
        } catch let error as DecodingError {
            let (place, problem) = error.placeAndProblem
            throw GatewayConfigurationError(place.isEmpty ? "the configuration \(problem)" : "'\(place)' \(problem)")
        }
        if let baseDirectory {
            for r in configuration.realms.indices {
                for m in configuration.realms[r].loginModules.indices {
                    if let file = configuration.realms[r].loginModules[m].usersFile, !file.hasPrefix("/") {
                        configuration.realms[r].loginModules[m].usersFile = (baseDirectory as NSString).appendingPathComponent(file)
                    }
                }
            }
        }
        return configuration
    }

    /// Reads a YAML file.
    public static func load(path: String) throws -> GatewayConfiguration {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try decode(yaml: text, baseDirectory: (path as NSString).deletingLastPathComponent)
    }
}

extension GatewayConfiguration {
    /// The keys a configuration may hold: any other is refused (a misspelt `realm:` would leave a service open).
    static let yamlKeys: YAMLKeys = .mapping(CodingKeys.self, [
        .realms: .list(.mapping(RealmConfiguration.CodingKeys.self, [.loginModules: .list(LoginModuleConfiguration.yamlKeys)])),
        .services: .list(.mapping(ServiceConfiguration.CodingKeys.self)),
        .tls: .mapping(TLSFiles.CodingKeys.self),
        .accountLockout: .mapping(AccountLockoutSettings.CodingKeys.self),
    ])
}

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
    /// a custom module passed to ``Gateway/init(configuration:customModules:logger:)``.
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
    /// `kerberos5`: the keytab with the service's keys (MIT's default keytab when absent).
    public var keytab: String?
    /// `kerberos5`: the only service principal accepted, e.g. `HTTP/gateway.example.com@EXAMPLE.COM` (any key of
    /// the keytab when absent).
    public var servicePrincipal: String?
    /// `kerberos5`: roles by client principal (`alice@EXAMPLE.COM`), by its name without the realm (`alice`), or
    /// `*` for every other principal.
    public var principalRoles: [String: [String]]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, flag, users, usersFile, jwksURL, introspection, requiredScope, keytab, servicePrincipal, principalRoles
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

/// A protected service: a public path prefix proxied to an upstream.
public struct ServiceConfiguration: Sendable, Codable {
    public var name: String
    /// The public path prefix, e.g. `/echo`; matched on whole segments, the longest prefix wins.
    public var path: String
    /// The upstream base URL (`http://host:port/base`); WebSockets go to the same URL with `ws://`.
    public var upstream: String
    /// The realm; none means the service is open.
    public var realm: String?
    /// Roles the subject must all hold; `*` = any authenticated user. Empty with a realm means `*`.
    public var requireRoles: [String]?
    /// Whether WebSocket upgrades are accepted and relayed to the upstream.
    public var webSocket: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable { case name, path, upstream, realm, requireRoles, webSocket }

    public init(name: String, path: String, upstream: String, realm: String? = nil, requireRoles: [String]? = nil, webSocket: Bool? = nil) {
        self.name = name
        self.path = path
        self.upstream = upstream
        self.realm = realm
        self.requireRoles = requireRoles
        self.webSocket = webSocket
    }
}

/// A configuration that cannot run.
public struct GatewayConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
