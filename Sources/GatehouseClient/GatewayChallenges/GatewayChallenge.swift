import Foundation

/// A gateway's challenge: the location that answered `401` and its `WWW-Authenticate` value, parsed as the
/// KAAZING clients do (reference §4.2): a leading `Application ` is stripped, so `Application Basic` and `Basic`
/// are both the scheme `Basic`.
public struct ChallengeRequest: Sendable, Equatable {
    /// The URL that was challenged.
    public let location: URL
    /// The scheme without the `Application ` prefix: `Basic`, `Token`, `Bearer`, ...
    public let authenticationScheme: String
    /// The text after the scheme, if any (e.g. `realm="demo"`).
    public let authenticationParameters: String?
    /// Whether the challenge had the `Application ` prefix (no browser dialog).
    public let isApplicationChallenge: Bool

    /// Parses `challenge` (a `WWW-Authenticate` value) for `location`.
    public init(location: URL, challenge: String) {
        self.location = location
        var text = challenge.trimmingCharacters(in: .whitespaces)
        isApplicationChallenge = text.hasPrefix("Application ")
        if isApplicationChallenge { text = String(text.dropFirst("Application ".count)).trimmingCharacters(in: .whitespaces) }
        if let space = text.firstIndex(of: " ") {
            authenticationScheme = String(text[..<space])
            let rest = text[space...].trimmingCharacters(in: .whitespaces)
            authenticationParameters = rest.isEmpty ? nil : rest
        } else {
            authenticationScheme = text
            authenticationParameters = nil
        }
    }

    /// The challenge's parameters (`name=value` or `name="quoted value"`), by lower-cased name.
    public var parameters: [String: String] {
        authenticationParameters.map(AuthenticationParameters.parse) ?? [:]
    }

    /// The `realm` parameter (the gateway realm's description), if any.
    public var realm: String? { parameters["realm"] }
}

/// A challenge handler's answer: the `Authorization` value to send, and the handler for the next challenge
/// of the same connection (the same one by default, so wrong credentials ask again).
public struct ChallengeResponse: Sendable {
    /// The `Authorization` header value, e.g. `Basic am9lOndlbGNvbWU=` or `Token eyJ...`.
    public var credentials: String
    /// The handler that answers the next challenge; `nil` = the connection's handler.
    public var nextChallengeHandler: (any ChallengeHandler)?

    public init(credentials: String, nextChallengeHandler: (any ChallengeHandler)? = nil) {
        self.credentials = credentials
        self.nextChallengeHandler = nextChallengeHandler
    }
}

/// Answers a gateway's `WWW-Authenticate` challenges with an `Authorization` value (KAAZING `ChallengeHandler`).
/// A server scheme and a client handler come in pairs.
///
/// This is the SDK's third handler abstraction, for gateways that speak HTTP authentication (Basic, Token,
/// Bearer, Negotiate) on HTTP requests and WebSocket handshakes. ``SecurityCheckChallengeHandler`` answers the
/// MobileFirst runtime's security checks; ``GatewayChallengeHandler`` answers a MobileFirst gateway's login page.
public protocol ChallengeHandler: Sendable {
    /// Whether this handler can answer `request` (typically by its scheme).
    func canHandle(_ request: ChallengeRequest) -> Bool
    /// The answer, or `nil` to give up (the connection fails).
    func handle(_ request: ChallengeRequest) async -> ChallengeResponse?
    /// The answer, `nil` to give up, or an error saying why the handler gives up (kept as the
    /// ``GatewayClientError/underlying`` cause of the request's failure). By default, ``handle(_:)``.
    func respond(to request: ChallengeRequest) async throws -> ChallengeResponse?
}

extension ChallengeHandler {
    /// Calls ``handle(_:)``.
    public func respond(to request: ChallengeRequest) async throws -> ChallengeResponse? {
        await handle(request)
    }
}
