public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers `Basic` (and `Application Basic`) challenges with a user's name and password from a ``KGLoginHandler``
/// — the realm's own one (``setRealmLoginHandler(_:loginHandler:)``) or the general one (``setLoginHandler(_:)``).
/// As KAAZING's, it asks its login handler at every challenge: a wrong password is asked again until the login
/// handler returns `nil`.
open class KGBasicChallengeHandler: KGChallengeHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var general: KGLoginHandler?
    private var byRealm: [String: KGLoginHandler] = [:]

    /// `[KGBasicChallengeHandler create]`.
    open override class func create() -> KGBasicChallengeHandler {
        KGBasicChallengeHandler()
    }

    /// Sets the login handler for challenges whose realm has none of its own; returns this handler.
    @discardableResult
    open func setLoginHandler(_ loginHandler: KGLoginHandler?) -> KGChallengeHandler {
        lock.withLock { general = loginHandler }
        return self
    }

    /// Sets the login handler for challenges with `realm` (its `realm` parameter, e.g. `Demo Realm`).
    open func setRealmLoginHandler(_ realm: String, loginHandler: KGLoginHandler) {
        lock.withLock { byRealm[realm] = loginHandler }
    }

    /// The general login handler, if one was set.
    open func loginHandler() -> KGLoginHandler? {
        lock.withLock { general }
    }

    open override func canHandle(_ challengeRequest: KGChallengeRequest?) -> Bool {
        challengeRequest?.authenticationScheme == "Basic"
    }

    /// Asks the realm's login handler (or the general one) and answers with `Basic` and the credentials; `nil` when
    /// there is no login handler or it returns `nil` (or credentials without a password).
    open override func handle(_ challengeRequest: KGChallengeRequest?) -> KGChallengeResponse? {
        guard let challengeRequest, canHandle(challengeRequest) else { return nil }
        let realm = challengeRequest.request.realm
        let handler = lock.withLock { realm.flatMap { byRealm[$0] } ?? general }
        guard let credential = handler?.credentials(), let user = credential.user, let password = credential.password else { return nil }
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        return KGChallengeResponse(credentials: "Basic " + token, nextChallengeHandler: nil)
    }
}
