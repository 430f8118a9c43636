public import Foundation

/// Why a request or a WebSocket handshake through a gateway failed.
///
/// A struct over private details with stable ``Code``s (as ``GatehouseClientError``), so that new kinds can be
/// added without breaking callers. Two errors are equal when their codes and details are equal; ``underlying``
/// is not compared.
public struct GatewayClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, extensible error code (``ErrorCode``; its values are below, as static members).
    public typealias Code = ErrorCode<GatewayClientError>

    private struct Details: Sendable, Equatable {
        var code: Code
        var location: URL?
        var challenge: String?
        var attempts: Int?
        var status: Int?
        var message: String?
    }

    private let details: Details
    /// What caused the error: the handler's reason for giving up (the ``GatehouseClientError`` that kept a
    /// ``TokenChallengeHandler`` from a token, a Kerberos failure, ...), or the transport's error.
    public let underlying: (any Error)?

    private init(_ details: Details, underlying: (any Error)? = nil) {
        self.details = details
        self.underlying = underlying
    }

    /// The code: match on it (`error.code == .retryLimitReached`).
    public var code: Code { details.code }
    /// The location that was challenged.
    public var location: URL? { details.location }
    /// The `WWW-Authenticate` value.
    public var challenge: String? { details.challenge }
    /// How many answers were refused, for `retryLimitReached`.
    public var attempts: Int? { details.attempts }
    /// The HTTP status of a refused handshake.
    public var status: Int? { details.status }
    /// A message, for `transport`.
    public var message: String? { details.message }

    /// Compares codes and details; ``underlying`` is not compared.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.details == rhs.details }
    /// `case .retryLimitReached = error`: matches the code.
    public static func ~= (code: Code, error: Self) -> Bool { error.code == code }

    /// The retry limit was reached: `attempts` answers were refused with a new challenge.
    public static func retryLimitReached(location: URL, attempts: Int, challenge: String) -> Self {
        Self(Details(code: .retryLimitReached, location: location, challenge: challenge, attempts: attempts))
    }
    /// The challenge handler gave up; `underlying` says why, when the handler said.
    public static func cancelled(location: URL, challenge: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .cancelled, location: location, challenge: challenge), underlying: underlying)
    }
    /// No handler can answer this challenge's scheme.
    public static func unsupportedChallenge(location: URL, challenge: String) -> Self {
        Self(Details(code: .unsupportedChallenge, location: location, challenge: challenge))
    }
    /// The HTTP exchange failed.
    public static func transport(_ message: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .transport, message: message), underlying: underlying)
    }
    /// The WebSocket handshake was refused with `status` (and `challenge`, if any).
    public static func refused(status: Int, challenge: String?) -> Self {
        Self(Details(code: .refused, challenge: challenge, status: status))
    }

    /// The server, or a proxy on the way, answered the WebSocket upgrade with `status` instead of switching protocols:
    /// a WebSocket cannot get through (KAAZING's emulated transport may).
    public static func webSocketBlocked(status: Int) -> Self {
        Self(Details(code: .webSocketBlocked, status: status))
    }

    /// A sentence for people.
    public var description: String {
        let place = location?.absoluteString ?? "?"
        let cause = underlying.map { ": \($0)" } ?? ""
        switch code {
        case .retryLimitReached: return "gave up on \(place) after \(attempts ?? 0) refused tries (\(challenge ?? ""))"
        case .cancelled: return "the challenge handler gave up on \(place) (\(challenge ?? ""))\(cause)"
        case .unsupportedChallenge: return "no challenge handler for \(challenge ?? "?") at \(place)"
        case .transport: return "HTTP failed: \(message ?? "")\(cause)"
        case .refused: return "WebSocket handshake refused with \(status ?? 0)" + (challenge.map { " (\($0))" } ?? "")
        case .webSocketBlocked: return "the WebSocket upgrade was answered with \(status ?? 0) instead of switching protocols"
        default: return "\(code)\(cause)"
        }
    }
}

extension GatewayClientError: LocalizedError {
    /// ``description``, so that `localizedDescription` (an alert's message) says what happened.
    public var errorDescription: String? { description }
}

extension ErrorCode where Domain == GatewayClientError {
    /// The retry limit was reached: every answer was refused with a new challenge.
    public static var retryLimitReached: Self { Self(rawValue: "retryLimitReached") }
    /// The challenge handler gave up (the user cancelled the login, no token could be obtained, ...).
    public static var cancelled: Self { Self(rawValue: "cancelled") }
    /// No handler can answer this challenge's scheme.
    public static var unsupportedChallenge: Self { Self(rawValue: "unsupportedChallenge") }
    /// The HTTP exchange (or the WebSocket connection) failed.
    public static var transport: Self { Self(rawValue: "transport") }
    /// The handshake was refused without a challenge that could be answered.
    public static var refused: Self { Self(rawValue: "refused") }
    /// The WebSocket upgrade was answered without switching protocols (a proxy that does not pass upgrades).
    public static var webSocketBlocked: Self { Self(rawValue: "webSocketBlocked") }
}
