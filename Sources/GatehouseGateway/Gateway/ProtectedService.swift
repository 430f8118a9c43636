public import Foundation

/// A protected service at run time. A class: every request routed to it holds it, and a reference is one retain
/// where the fields are many.
public final class ProtectedService: Sendable {
    public let name: String
    /// The public path prefix, normalised like a request's path (``RequestTarget``), without a trailing `/`
    /// (`""` for the root).
    public let path: String
    public let upstream: URL
    public let realm: Realm?
    public let requiredRoles: [String]
    public let webSocket: Bool
    /// The origins whose pages may open its WebSockets (``ServiceConfiguration/allowedOrigins``); `nil`: any.
    public let allowedOrigins: Set<String>?
    /// How long its WebSockets may stay silent (``ServiceConfiguration/inactivityTimeout``); `nil`: no limit.
    public let inactivityTimeout: Duration?
    /// The prefix's segments, matched against a request's normalised segments.
    let segments: [String]
    /// Where requests go.
    let base: UpstreamBase
    /// The upstream's connections' key in the relay's pools.
    let upstreamKey: UpstreamKey

    /// A service at `path` (normalised; a path that is not a valid absolute path, or an upstream that is not an
    /// `http`/`https` URL without query or user information, throws ``GatewayConfigurationError``).
    public init(name: String, path: String, upstream: URL, realm: Realm?, requiredRoles: [String] = [], webSocket: Bool = false,
                allowedOrigins: [String]? = nil, inactivityTimeout: Duration? = nil) throws {
        self.name = name
        if let inactivityTimeout, inactivityTimeout < .milliseconds(2) || inactivityTimeout > .seconds(86_400) {
            throw GatewayConfigurationError("service \(name): inactivityTimeout must be between 0.002 and 86400 seconds")
        }
        self.inactivityTimeout = inactivityTimeout
        self.allowedOrigins = try allowedOrigins.map { origins in
            Set(try origins.map { origin in
                guard let normalised = Self.origin(origin) else {
                    throw GatewayConfigurationError("service \(name): allowedOrigins: \(origin) is not an origin (scheme://host[:port])")
                }
                return normalised
            })
        }
        let prefix: RequestTarget
        do {
            prefix = try RequestTarget(parsing: path.hasPrefix("/") ? path : "/" + path)
        } catch {
            throw GatewayConfigurationError("service \(name): path \(path): \(error)")
        }
        guard prefix.query == nil else { throw GatewayConfigurationError("service \(name): path \(path) has a query") }
        segments = prefix.segments
        self.path = segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
        base = try UpstreamBase(upstream, service: name)
        upstreamKey = UpstreamKey(host: base.host, port: base.port, tls: base.scheme == "https")
        self.upstream = upstream
        self.realm = realm
        self.requiredRoles = requiredRoles
        self.webSocket = webSocket
    }

    /// Whether a page of `origin` (a request's `Origin`, or the emulation bridge's `X-Origin`) may open this service's
    /// WebSockets: no origin (not a browser), an allowed one, or any when none are configured. As KAAZING Gateway does
    /// under a cross-origin constraint, `privileged://host:port` is always admitted: KAAZING's native clients (Java,
    /// .NET, Objective-C) send it and no browser can (a page never sets its own `Origin`).
    ///
    /// Unlike KAAZING Gateway, a page of the gateway's own origin is not admitted for being one: that origin is made of
    /// the request's `Host`, which a DNS-rebinding page chooses (its own name, resolved to the gateway's address), so
    /// admitting it would let any site through `allowedOrigins`. A service whose pages are served by the gateway's own
    /// origin lists that origin.
    func allows(origin: String?) -> Bool {
        guard let allowedOrigins, let origin else { return true }
        if Self.isPrivileged(origin) { return true }
        guard let normalised = Self.origin(origin) else { return false }
        return allowedOrigins.contains(normalised)
    }

    /// Whether `text` is a KAAZING native client's origin: `privileged://` and an authority (`host[:port]`) of
    /// letters, digits and `.-:[]` only.
    static func isPrivileged(_ text: String) -> Bool {
        let prefix = "privileged://"
        guard text.utf8.count > prefix.utf8.count, text.lowercased().hasPrefix(prefix) else { return false }
        return text.utf8.dropFirst(prefix.utf8.count).allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || ".-:[]".utf8.contains(byte)
        }
    }

    /// `scheme://host[:port]` in lower case, the scheme's default port left out; `nil` for anything else.
    static func origin(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.path.isEmpty, url.query == nil, url.fragment == nil
        else { return nil }
        guard host.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-[]:".unicodeScalars.contains($0)) })
        else { return nil }
        let defaultPort = scheme == "http" ? 80 : 443
        guard let port = url.port, port != defaultPort else { return scheme + "://" + host }
        return scheme + "://" + host + ":" + String(port)
    }

    /// The rest of `target`'s path after this service's prefix, or `nil` when the service does not match. A
    /// segment with path parameters matches without them (`/admin;jsessionid=1/x` is under `/admin`): servlet
    /// containers (Tomcat, Jetty) drop them and serve `/admin/x`, so a stricter service must not be dodged with one.
    func remainder(of target: RequestTarget) -> Remainder? {
        guard target.segments.count >= segments.count, target.segments.starts(with: segments, by: Self.segment(_:matches:)) else { return nil }
        let rest = Array(target.segments.dropFirst(segments.count))
        // "/api/" keeps its trailing slash when "/api" is the prefix.
        return Remainder(segments: rest, trailingSlash: target.trailingSlash)
    }

    /// Whether a request's path segment is a service's prefix segment: the same, or the same followed by `;` and
    /// its parameters.
    static func segment(_ requested: String, matches prefix: String) -> Bool {
        if requested == prefix { return true }
        let bytes = requested.utf8
        let count = prefix.utf8.count
        guard bytes.count > count, bytes.starts(with: prefix.utf8) else { return false }
        return bytes[bytes.index(bytes.startIndex, offsetBy: count)] == UInt8(ascii: ";")
    }

    /// The path below a service's prefix: whole normalised segments, never `.`, `..` or empty.
    struct Remainder: Sendable, Equatable {
        var segments: [String]
        var trailingSlash: Bool

        /// `""`, `"/"`, or `"/a/b"` (with a trailing `/` if the request had one).
        var path: String {
            segments.isEmpty ? (trailingSlash ? "/" : "") : "/" + segments.joined(separator: "/") + (trailingSlash ? "/" : "")
        }
    }

    /// The upstream URL for a request: the upstream's base path followed by the remainder, with `query` (already
    /// checked by ``RequestTarget``).
    func upstreamURL(remainder: Remainder, query: String?, webSocket: Bool = false) -> String {
        base.url(path: remainder.path, query: query, webSocket: webSocket)
    }
}

/// A service's upstream, split once at start: `scheme://authority` and the normalised base path. Request data is
/// only ever appended to it as strings checked by ``RequestTarget``; no URL is parsed or mutated per request.
struct UpstreamBase: Sendable, Equatable {
    /// `http` or `https` (`ws` and `wss` upstreams are read as these).
    let scheme: String
    /// `host[:port]` as configured.
    let authority: String
    /// The base path without a trailing `/` (`""` for the root).
    let path: String
    /// Whether the base path ends with `/`: kept when a request names the service's prefix exactly.
    let trailingSlash: Bool
    /// The host to connect to (an IPv6 address without its brackets).
    let host: String
    /// The port to connect to (the scheme's default when the authority names none).
    let port: Int

    init(_ upstream: URL, service: String) throws {
        let text = upstream.absoluteString
        guard let components = URLComponents(string: text), let given = components.scheme?.lowercased(),
              let scheme = ["http": "http", "https": "https", "ws": "http", "wss": "https"][given],
              let host = components.host, !host.isEmpty
        else {
            throw GatewayConfigurationError("service \(service): upstream \(text) is not an http or https URL")
        }
        guard components.query == nil, components.fragment == nil, components.user == nil, components.password == nil else {
            throw GatewayConfigurationError("service \(service): upstream \(text) may not have a query, a fragment or user information")
        }
        // The authority exactly as written: between "://" and the path.
        guard let schemeEnd = text.range(of: "://") else {
            throw GatewayConfigurationError("service \(service): upstream \(text) is not an http or https URL")
        }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let basePath = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let normalised: RequestTarget
        do {
            normalised = try RequestTarget(parsing: basePath)
        } catch {
            throw GatewayConfigurationError("service \(service): upstream path \(basePath): \(error)")
        }
        self.scheme = scheme
        self.authority = String(rest[..<authorityEnd])
        self.path = normalised.segments.isEmpty ? "" : "/" + normalised.segments.joined(separator: "/")
        self.trailingSlash = normalised.trailingSlash
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// The request target sent upstream: `/base/path?query`.
    func target(path remainder: String, query: String?) -> String {
        var path = self.path + (remainder.isEmpty && trailingSlash ? "/" : remainder)
        if path.isEmpty { path = "/" }
        if let query, !query.isEmpty { path += "?" + query }
        return path
    }

    /// `scheme://authority/base/path?query`; `ws`/`wss` for a WebSocket.
    func url(path remainder: String, query: String?, webSocket: Bool) -> String {
        let scheme = webSocket ? (self.scheme == "https" ? "wss" : "ws") : self.scheme
        return scheme + "://" + authority + target(path: remainder, query: query)
    }
}
