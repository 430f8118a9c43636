public import GatehouseChecks
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
/// forwardedHeader: x-forwarded-for       # the one field those peers set (or forwarded): only it is believed
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
    /// kept (and appended to); every other client's are replaced by the gateway's own (see `TrustedProxies`).
    public var trustedProxies: [String]?
    /// The one forwarding field the ``trustedProxies`` set, and the only one believed from them: `x-forwarded-for`
    /// (the default: what the README's nginx file sets) or `forwarded` (RFC 7239). The other is a client's claim.
    public var forwardedHeader: TrustedProxies.ForwardedField?
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
    /// Password checks of the `users` login modules per client address (`SourceThrottle`, in this process): the
    /// same keys as `accountLockout`, the server's `sourceThrottle` defaults; `threshold: 0` turns it off.
    public var sourceThrottle: AccountLockoutSettings?
    /// Serve `https`/`wss` with this certificate chain and key (PEM files, read again on SIGHUP).
    public var tls: TLSFiles?
    /// CA certificates (PEM) that `https`/`wss` upstreams are verified against, instead of the system's roots.
    public var upstreamCAFile: String?

    /// A certificate chain and its private key.
    public struct TLSFiles: Sendable, Codable {
        public var certificate: String
        public var key: String
        /// Ask clients for a certificate (optional): tokens bound to one (RFC 8705) are then accepted by the
        /// `gatehouse-token` module from the connection that presents it.
        public var clientCertificates: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case certificate, key, clientCertificates }
        public init(certificate: String, key: String, clientCertificates: Bool? = nil) {
            self.certificate = certificate
            self.key = key
            self.clientCertificates = clientCertificates
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
        case host, port, realms, services, maxWebSocketMessageSize, trustedProxies, forwardedHeader, headerReadTimeout, idleTimeout, upstreamReadTimeout, accountLockout, tls,
             upstreamCAFile, sourceThrottle
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
        forwardedHeader = try container.decodeIfPresent(TrustedProxies.ForwardedField.self, forKey: .forwardedHeader)
        headerReadTimeout = try container.decodeIfPresent(Double.self, forKey: .headerReadTimeout)
        idleTimeout = try container.decodeIfPresent(Double.self, forKey: .idleTimeout)
        upstreamReadTimeout = try container.decodeIfPresent(Double.self, forKey: .upstreamReadTimeout)
        accountLockout = try container.decodeIfPresent(AccountLockoutSettings.self, forKey: .accountLockout)
        sourceThrottle = try container.decodeIfPresent(AccountLockoutSettings.self, forKey: .sourceThrottle)
        tls = try container.decodeIfPresent(TLSFiles.self, forKey: .tls)
        upstreamCAFile = try container.decodeIfPresent(String.self, forKey: .upstreamCAFile)
    }

    /// Decodes YAML; relative `usersFile` paths are resolved against `baseDirectory`.
    public static func decode(yaml: String, baseDirectory: String? = nil) throws -> GatewayConfiguration {
        var configuration = try GatewayConfigurationError.decode(
            GatewayConfiguration.self, yaml: yaml, keys: yamlKeys, keyOf: "the gateway's configuration", whole: "the configuration")
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
        .sourceThrottle: .mapping(AccountLockoutSettings.CodingKeys.self),
    ])
}

/// A configuration that cannot run.
public struct GatewayConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }

    /// `yaml` decoded as `T` once every key is one of `keys`, or the error that says what is wrong and where, in
    /// words: `keyOf` names what a key belongs to, `whole` the text, `file` (if any) leads the message.
    static func decode<T: Decodable>(_ type: T.Type, yaml: String, keys: YAMLKeys, keyOf: String, whole: String, file: String? = nil) throws -> T {
        let lead = file.map { "\($0): " } ?? ""
        if let unknown = keys.unknownKey(in: yaml) {
            throw GatewayConfigurationError(lead + "'\(unknown.path)' is not a key of \(keyOf) (known there: \(unknown.known.joined(separator: ", ")))")
        }
        do {
            return try YAMLDecoder().decode(type, from: yaml)
        } catch let error as DecodingError {
            throw GatewayConfigurationError(lead + error.sentence(whole: whole))
        }
    }
}
