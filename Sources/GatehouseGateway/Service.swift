import Foundation

/// A protected service at run time.
public struct Service: Sendable {
    public let name: String
    /// The public path prefix, without a trailing `/` (`""` for the root).
    public let path: String
    public let upstream: URL
    public let realm: Realm?
    public let requiredRoles: [String]
    public let webSocket: Bool

    public init(name: String, path: String, upstream: URL, realm: Realm?, requiredRoles: [String] = [], webSocket: Bool = false) {
        self.name = name
        var prefix = path.hasPrefix("/") ? path : "/" + path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.path = prefix
        self.upstream = upstream
        self.realm = realm
        self.requiredRoles = requiredRoles
        self.webSocket = webSocket
    }

    /// The rest of `requestPath` after this service's prefix, or `nil` when the service does not match.
    func remainder(of requestPath: String) -> String? {
        if path.isEmpty { return requestPath }
        guard requestPath.hasPrefix(path) else { return nil }
        let rest = requestPath.dropFirst(path.count)
        guard rest.isEmpty || rest.hasPrefix("/") else { return nil }
        return String(rest)
    }

    /// The upstream URL for a request: the upstream's path followed by the remainder, with the query.
    func upstreamURL(remainder: String, query: String?, webSocket: Bool = false) -> String {
        var components = URLComponents(url: upstream, resolvingAgainstBaseURL: false) ?? URLComponents()
        var base = components.percentEncodedPath
        while base.hasSuffix("/") && !remainder.isEmpty { base.removeLast() }
        components.percentEncodedPath = base + remainder
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        components.percentEncodedQuery = (query?.isEmpty ?? true) ? nil : query
        if webSocket {
            switch components.scheme?.lowercased() {
            case "https": components.scheme = "wss"
            case "http": components.scheme = "ws"
            default: break
            }
        }
        return components.string ?? upstream.absoluteString
    }
}
