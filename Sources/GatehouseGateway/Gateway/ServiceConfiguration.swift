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
    /// The web origins (`scheme://host[:port]`) whose pages may open this service's WebSockets, natively or on
    /// KAAZING's emulated transport (KAAZING's `cross-site-constraint`). Unset: any origin.
    public var allowedOrigins: [String]?
    /// Seconds a relayed WebSocket may stay silent, as KAAZING Gateway's `ws.inactivity.timeout`: the gateway pings
    /// a native client after half of it without reading, closes the connection after all of it, and announces it to
    /// KAAZING's clients that ask for `x-kaazing-idle-timeout` (then writing a `PONG` whenever it wrote nothing
    /// for three quarters of it; on the emulated transport, only those). Unset: no inactivity timeout, and the
    /// extension is declined.
    public var inactivityTimeout: Double?

    enum CodingKeys: String, CodingKey, CaseIterable { case name, path, upstream, realm, requireRoles, webSocket, allowedOrigins, inactivityTimeout }

    public init(name: String, path: String, upstream: String, realm: String? = nil, requireRoles: [String]? = nil, webSocket: Bool? = nil,
                allowedOrigins: [String]? = nil, inactivityTimeout: Double? = nil) {
        self.allowedOrigins = allowedOrigins
        self.inactivityTimeout = inactivityTimeout
        self.name = name
        self.path = path
        self.upstream = upstream
        self.realm = realm
        self.requireRoles = requireRoles
        self.webSocket = webSocket
    }
}
