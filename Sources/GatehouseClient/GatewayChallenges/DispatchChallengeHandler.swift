import Foundation
import GatehouseProtocol

/// Routes challenges to handlers registered for location patterns (KAAZING `DispatchChallengeHandler`):
/// `[scheme://]host[:port][/path]`, with `*` matching one or more host labels, path segments or any port. A pattern
/// without a port has its scheme's default one (`http` and `ws` 80, `https` and `wss` 443; no scheme is `http`), so
/// give the scheme, the port or `:*` for TLS locations. The most specific matching pattern wins; within it, the first
/// handler (in registration order) whose `canHandle` accepts the challenge's scheme.
///
/// ```swift
/// let dispatch = DispatchChallengeHandler()
///     .register("localhost:8090/echo", BasicChallengeHandler(loginHandler: prompt))
///     .register("https://*.example.com/api/*", TokenChallengeHandler(client: client, scope: "accessRestricted"))
/// ```
public final class DispatchChallengeHandler: HTTPChallengeHandler {
    private struct Registration {
        let description: String
        let pattern: LocationPattern
        let handler: any HTTPChallengeHandler
    }

    private let registrations = Locked<[Registration]>([])

    public init() {}

    /// Registers `handler` for `location` (chainable).
    @discardableResult
    public func register(_ location: String, _ handler: any HTTPChallengeHandler) -> Self {
        let pattern = LocationPattern(location)
        registrations.withLock { $0.append(Registration(description: location, pattern: pattern, handler: handler)) }
        return self
    }

    /// Removes the handlers registered for exactly `location` (chainable; unknown ones are ignored).
    @discardableResult
    public func unregister(_ location: String) -> Self {
        registrations.withLock { $0.removeAll { $0.description == location } }
        return self
    }

    /// The handler for `request`, if any.
    public func handler(for request: ChallengeRequest) -> (any HTTPChallengeHandler)? {
        let target = LocationPattern(request.location.absoluteString)
        let candidates = registrations.withLock { $0 }.enumerated()
            .filter { $0.element.pattern.matches(target) }
            .sorted { ($0.element.pattern.specificity, -$0.offset) > ($1.element.pattern.specificity, -$1.offset) }
        return candidates.first { $0.element.handler.canHandle(request) }?.element.handler
    }

    public func canHandle(_ request: ChallengeRequest) -> Bool { handler(for: request) != nil }

    public func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        try? await respond(to: request)
    }

    /// The answer of the handler for `request`; its reason for giving up, if it gives one, is passed on.
    public func respond(to request: ChallengeRequest) async throws -> ChallengeResponse? {
        guard let handler = handler(for: request), var response = try await handler.respond(to: request) else { return nil }
        response.nextChallengeHandler = self
        return response
    }
}

/// A location tokenised as in the KAAZING clients: host labels reversed, the port (default by scheme), path segments.
struct LocationPattern: Sendable {
    let host: [String]
    let port: String
    let path: [String]

    init(_ location: String) {
        var text = location
        if !text.contains("://") { text = "http://" + text }
        let scheme = String(text[..<text.range(of: "://")!.lowerBound]).lowercased()
        var rest = String(text[text.range(of: "://")!.upperBound...])
        if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = String(rest[..<query]) }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = String(rest[..<slash])
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        let pathText = rest[slash...]
        var hostText = authority
        var port: String?
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            hostText = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        }
        host = hostText.lowercased().split(separator: ".").reversed().map(String.init)
        self.port = port ?? (scheme == "https" || scheme == "wss" ? "443" : "80")
        path = pathText.split(separator: "/").map(String.init)
    }

    /// More literal tokens = more specific.
    var specificity: Int {
        (host + [port] + path).reduce(0) { $0 + ($1 == "*" ? 1 : 4) }
    }

    func matches(_ target: LocationPattern) -> Bool {
        Self.match(host[...], target.host[...]) && (port == "*" || port == target.port) && Self.match(path[...], target.path[...])
    }

    /// `*` matches one or more tokens.
    static func match(_ pattern: ArraySlice<String>, _ tokens: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return tokens.isEmpty }
        if first == "*" {
            guard !tokens.isEmpty else { return false }
            for taken in 1...tokens.count where match(pattern.dropFirst(), tokens.dropFirst(taken)) { return true }
            return false
        }
        guard let token = tokens.first, token == first else { return false }
        return match(pattern.dropFirst(), tokens.dropFirst())
    }
}
