public import Foundation

/// Chooses a challenge handler by location, as KAAZING's `KGDispatchChallengeHandler`: register handlers for location
/// descriptions (`host:port/path`, with `*` matching any run of characters: `*.example.com:8000/echo/*`); the first
/// registered description that matches the challenged location answers.
open class KGDispatchChallengeHandler: KGChallengeHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var registered: [(location: String, handler: KGChallengeHandler)] = []

    /// `[KGDispatchChallengeHandler create]`.
    open override class func create() -> KGDispatchChallengeHandler {
        KGDispatchChallengeHandler()
    }

    /// Registers `challengeHandler` for `locationDescription`; returns this handler.
    @discardableResult
    open func registerChallengeHandler(_ locationDescription: String, challengeHandler: KGChallengeHandler) -> KGDispatchChallengeHandler {
        lock.withLock { registered.append((locationDescription, challengeHandler)) }
        return self
    }

    /// Removes `challengeHandler` from `locationDescription`; returns this handler.
    @discardableResult
    open func unregisterChallengeHandler(_ locationDescription: String, challengeHandler: KGChallengeHandler) -> KGDispatchChallengeHandler {
        lock.withLock { registered.removeAll { $0.location == locationDescription && $0.handler === challengeHandler } }
        return self
    }

    /// Forgets every registration.
    open func clear() {
        lock.withLock { registered.removeAll() }
    }

    open override func canHandle(_ challengeRequest: KGChallengeRequest?) -> Bool {
        guard let challengeRequest else { return false }
        return lookup(challengeRequest)?.canHandle(challengeRequest) ?? false
    }

    open override func handle(_ challengeRequest: KGChallengeRequest?) -> KGChallengeResponse? {
        guard let challengeRequest else { return nil }
        return lookup(challengeRequest)?.handle(challengeRequest)
    }

    /// The first handler registered for a description matching the request's location that can handle it.
    private func lookup(_ request: KGChallengeRequest) -> KGChallengeHandler? {
        let location = request.request.location
        guard let host = location.host else { return nil }
        let port = location.port ?? (["wss", "https"].contains(location.scheme ?? "") ? 443 : 80)
        let path = location.path.isEmpty ? "/" : location.path
        let target = "\(host):\(port)\(path)"
        let candidates = lock.withLock { registered }
        return candidates.first { entry in
            Self.matches(entry.location, target) && entry.handler.canHandle(request)
        }?.handler
    }

    /// Whether `target` (`host:port/path`) matches `description`: `*` any run of characters; a description without a
    /// port matches any, without a path any path.
    static func matches(_ description: String, _ target: String) -> Bool {
        var pattern = description
        if let scheme = pattern.range(of: "://") { pattern = String(pattern[scheme.upperBound...]) }
        let hostPart = pattern.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? pattern
        if !hostPart.contains(":") { pattern = hostPart + ":*" + pattern.dropFirst(hostPart.count) }
        if !pattern.dropFirst(hostPart.count).contains("/") { pattern += "/*" }
        return glob(Array(pattern.lowercased()), Array(target.lowercased()))
    }

    /// `*`-only glob matching, in time bounded by the lengths' product.
    private static func glob(_ pattern: [Character], _ text: [Character]) -> Bool {
        var row = [Bool](repeating: false, count: text.count + 1)
        row[0] = true
        for p in pattern {
            var next = [Bool](repeating: false, count: text.count + 1)
            if p == "*" {
                var seen = false
                for i in 0...text.count {
                    seen = seen || row[i]
                    next[i] = seen
                }
            } else {
                for i in 0..<text.count where row[i] && text[i] == p { next[i + 1] = true }
            }
            row = next
        }
        return row[text.count]
    }
}
