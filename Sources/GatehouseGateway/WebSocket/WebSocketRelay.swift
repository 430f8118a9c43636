import NIOSSL
import Foundation
public import GatehouseProtocol
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The gateway's in-band revalidation frames: the format is `InBandRevalidation` (GatehouseProtocol, shared with
/// the SDK); this adds what only the relay needs. Neither a challenge nor an answer reaches the upstream or the
/// application (`GatewayWebSocketClient` filters them).
///
/// Text frames starting with the reserved prefix belong to the gateway: it never relays one from the upstream to
/// the client (an upstream could otherwise challenge the client and phish its credentials) nor from the client to
/// the upstream (an answer carries credentials); it drops them and logs a warning, without their content.
public typealias GatewayRevalidation = InBandRevalidation

/// Relays an accepted WebSocket to its upstream, both ways, until either side closes or the credentials expire.
///
/// Back-pressure: each direction awaits its write before reading the next message, so a slow reader slows
/// the writer down instead of filling the gateway's memory.
struct WebSocketRelay: Sendable {
    /// Why and when the connection must end.
    struct Deadline: Sendable {
        var instant: ContinuousClock.Instant
        var reason: String
    }

    /// The close code of an expired connection: 1008 policy violation.
    static let expiredCloseCode = WebSocketErrorCode.policyViolation

    let upstreamURL: String
    /// The upstream without its query, for logs.
    var upstreamForLogs: String { upstreamURL.split(separator: "?", maxSplits: 1).first.map(String.init) ?? upstreamURL }
    let extraHeaders: HTTPFields
    let maxMessageSize: Int
    let deadline: Deadline?
    let revalidation: Revalidation?
    let onExpiry: @Sendable () -> Void
    /// Called with the error when the upstream cannot be reached (the client's WebSocket is closed 1011): counted, and
    /// a warning for the operator at most once per service every 10 s (``Gateway/warnUpstreamFailure(service:error:answered:)``).
    var onUpstreamError: @Sendable (_ error: String) -> Void = { _ in }
    /// The service's name, for metrics.
    var serviceName = ""
    let logger: Logger

    /// How a realm that revalidates checks an in-band answer and computes the next deadline.
    struct Revalidation: Sendable {
        /// The realm's `WWW-Authenticate` value.
        let challenge: String
        /// How long a challenge may stay unanswered.
        let grace: Duration
        /// The subject of an `Authorization` value, if the realm lets it in.
        let check: @Sendable (String) async -> Subject?
        /// The deadline after a successful revalidation.
        let deadline: @Sendable (Subject) -> Deadline?
        /// Who opened the connection: a revalidation must authenticate the same user.
        let user: String?

        /// What an answer leads to.
        enum Outcome: Sendable, Equatable {
            case accepted(Subject)
            /// Refused by the realm: closed with 1008 `revalidation failed`.
            case refused
            /// Another user than the one who opened the connection: closed with 1008 `revalidation changed the user`.
            case differentUser
        }

        /// Checks an answer's `Authorization` value.
        func outcome(of authorization: String) async -> Outcome {
            guard let subject = await check(authorization) else { return .refused }
            return subject.name == user ? .accepted(subject) : .differentUser
        }
    }
}
