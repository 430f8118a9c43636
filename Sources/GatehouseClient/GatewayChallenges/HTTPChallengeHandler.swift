import Foundation

/// A challenge handler's answer: the `Authorization` value to send, and the handler for the next challenge
/// of the same connection (the same one by default, so wrong credentials ask again).
public struct ChallengeResponse: Sendable {
    /// The `Authorization` header value, e.g. `Basic am9lOndlbGNvbWU=` or `Token eyJ...`.
    public var credentials: String
    /// The handler that answers the next challenge; `nil` = the connection's handler.
    public var nextChallengeHandler: (any HTTPChallengeHandler)?

    public init(credentials: String, nextChallengeHandler: (any HTTPChallengeHandler)? = nil) {
        self.credentials = credentials
        self.nextChallengeHandler = nextChallengeHandler
    }
}

/// Answers a gateway's HTTP authentication challenges (`WWW-Authenticate`) with an `Authorization` value — the
/// KAAZING clients' `ChallengeHandler` (that name is kept as an alias). A server scheme and a client handler come
/// in pairs: ``BasicChallengeHandler``, ``TokenChallengeHandler``, Kerberos' `NegotiateChallengeHandler`, and
/// ``DispatchChallengeHandler`` to choose by location.
///
/// One of the SDK's three handler abstractions: this one for gateways that speak HTTP authentication (the
/// Gatehouse gateway) on HTTP requests and WebSocket handshakes; ``SecurityCheckChallengeHandler`` answers the
/// MobileFirst runtime's security checks; ``LoginPageChallengeHandler`` answers a gateway's own login page.
public protocol HTTPChallengeHandler: Sendable {
    /// Whether this handler can answer `request` (typically by its scheme).
    func canHandle(_ request: ChallengeRequest) -> Bool
    /// The answer, or `nil` to give up (the connection fails).
    func handle(_ request: ChallengeRequest) async -> ChallengeResponse?
    /// The answer, `nil` to give up, or an error saying why the handler gives up (kept as the
    /// ``GatewayClientError/underlying`` cause of the request's failure). By default, ``handle(_:)``.
    func respond(to request: ChallengeRequest) async throws -> ChallengeResponse?
}

extension HTTPChallengeHandler {
    /// Calls ``handle(_:)``.
    public func respond(to request: ChallengeRequest) async throws -> ChallengeResponse? {
        await handle(request)
    }
}

/// The KAAZING clients' name of ``HTTPChallengeHandler``, for code ported from them.
public typealias ChallengeHandler = HTTPChallengeHandler
