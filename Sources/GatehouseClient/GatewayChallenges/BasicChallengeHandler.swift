import Foundation
import GatehouseProtocol

/// Answers `Basic` and `Application Basic` challenges with `Authorization: Basic base64(user:password)` (UTF-8),
/// asking a ``LoginHandler``: the one registered for the challenge's realm, else the general one.
public final class BasicChallengeHandler: HTTPChallengeHandler {
    private struct Handlers {
        var general: (any LoginHandler)?
        var byRealm: [String: any LoginHandler] = [:]
    }

    private let handlers: Locked<Handlers>

    public init(loginHandler: (any LoginHandler)? = nil) {
        handlers = Locked(Handlers(general: loginHandler))
    }

    /// Sets the general login handler.
    @discardableResult
    public func setLoginHandler(_ handler: (any LoginHandler)?) -> Self {
        handlers.withLock { $0.general = handler }
        return self
    }

    /// Sets the login handler for challenges whose `realm` is `realm` (the gateway realm's description).
    @discardableResult
    public func setRealmLoginHandler(_ realm: String, _ handler: (any LoginHandler)?) -> Self {
        handlers.withLock { $0.byRealm[realm] = handler }
        return self
    }

    public func canHandle(_ request: ChallengeRequest) -> Bool {
        request.authenticationScheme.caseInsensitiveCompare("Basic") == .orderedSame
    }

    public func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        let handler = handlers.withLock { handlers in request.realm.flatMap { handlers.byRealm[$0] } ?? handlers.general }
        guard let handler, let credentials = await handler.credentials(for: request) else { return nil }
        let encoded = Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
        return ChallengeResponse(credentials: "Basic \(encoded)", nextChallengeHandler: self)
    }
}
