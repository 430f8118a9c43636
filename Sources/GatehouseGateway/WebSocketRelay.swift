import NIOSSL
import Foundation
import GatehouseProtocol
import HTTPTypes
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The gateway's in-band revalidation frames: the format is ``InBandRevalidation`` (GatehouseProtocol, shared with
/// the SDK); this adds what only the relay needs. Neither a challenge nor an answer reaches the upstream or the
/// application (``GatewayWebSocketClient`` filters them).
///
/// Text frames starting with the reserved prefix belong to the gateway: it never relays one from the upstream to
/// the client (an upstream could otherwise challenge the client and phish its credentials) nor from the client to
/// the upstream (an answer carries credentials); it drops them and logs a warning, without their content.
public typealias GatewayRevalidation = InBandRevalidation

extension InBandRevalidation {
    /// Whether `message` is one of the gateway's own frames.
    static func isReserved(_ message: WebSocketMessage) -> Bool {
        if case .text(let text) = message { return text.hasPrefix(reservedPrefix) }
        return false
    }
}

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
    /// Trust for a `wss` upstream (`nil`: the system's roots).
    var upstreamTLS: TLSConfiguration? = nil
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

    /// The connection's current deadline and whether a challenge is out.
    final class State: Sendable {
        struct Value {
            var deadline: Deadline?
            var challenged = false
        }
        let value: Mutex<Value>
        init(_ deadline: Deadline?) { value = Mutex(Value(deadline: deadline)) }
    }

    func run(client inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async {
        do {
            try await WebSocketClient.connect(
                url: upstreamURL, configuration: .init(maxFrameSize: maxMessageSize, additionalHeaders: extraHeaders),
                tlsConfiguration: upstreamTLS, logger: logger
            ) { upstreamInbound, upstreamOutbound, _ in
                let state = State(deadline)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var dropped = 0
                        do {
                            for try await message in inbound.messages(maxSize: maxMessageSize) {
                                if let revalidation, case .text(let text) = message, text.hasPrefix(GatewayRevalidation.answerPrefix) {
                                    let authorization = String(text.dropFirst(GatewayRevalidation.answerPrefix.count))
                                    switch await revalidation.outcome(of: authorization) {
                                    case .accepted(let subject):
                                        let next = revalidation.deadline(subject)
                                        state.value.withLock { $0 = .init(deadline: next, challenged: false) }
                                        continue
                                    case .refused:
                                        onExpiry()
                                        logger.info("closing a WebSocket whose revalidation failed")
                                        try? await outbound.close(Self.expiredCloseCode, reason: "revalidation failed")
                                    case .differentUser:
                                        onExpiry()
                                        logger.warning("closing a WebSocket revalidated as another user")
                                        try? await outbound.close(Self.expiredCloseCode, reason: "revalidation changed the user")
                                    }
                                    break
                                }
                                if GatewayRevalidation.isReserved(message) {
                                    dropped += 1
                                    logger.log(level: dropped == 1 ? .warning : .debug, "dropped a client frame with the gateway's reserved prefix",
                                               metadata: ["upstream": .string(upstreamForLogs), "dropped": .stringConvertible(dropped)])
                                    continue
                                }
                                try await upstreamOutbound.write(Self.frame(message))
                            }
                        } catch {}
                        try? await upstreamOutbound.close(.normalClosure, reason: nil)
                    }
                    group.addTask {
                        var dropped = 0
                        do {
                            for try await message in upstreamInbound.messages(maxSize: maxMessageSize) {
                                // Warned once per connection, then at debug: a hostile upstream cannot flood the log.
                                if GatewayRevalidation.isReserved(message) {
                                    dropped += 1
                                    logger.log(level: dropped == 1 ? .warning : .debug, "dropped an upstream frame with the gateway's reserved prefix",
                                               metadata: ["upstream": .string(upstreamForLogs), "dropped": .stringConvertible(dropped)])
                                    continue
                                }
                                try await outbound.write(Self.frame(message))
                            }
                        } catch {}
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                    if deadline != nil {
                        group.addTask { await expire(state, outbound, upstreamOutbound) }
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            onUpstreamError("\(error)")
            logger.debug("WebSocket upstream failed", metadata: ["upstream": .string(upstreamForLogs), "error": .string("\(error)")])
            try? await outbound.close(.unexpectedServerError, reason: "upstream unavailable")
        }
    }

    /// Waits for the connection's deadline; then challenges in band (once per deadline, when the realm
    /// revalidates) or closes both sides with 1008 and the deadline's reason. Returns only when it closed, or when
    /// cancelled.
    private func expire(_ state: State, _ outbound: WebSocketOutboundWriter, _ upstreamOutbound: WebSocketOutboundWriter) async {
        while true {
            let (deadline, challenged) = state.value.withLock { ($0.deadline, $0.challenged) }
            guard let current = deadline else {
                // Revalidated credentials that never expire: wait for the end of the connection.
                do { try await Task.sleep(for: .seconds(3600)) } catch { return }
                continue
            }
            // While a challenge is out, its answer may set an earlier deadline than the grace period's: look
            // again every 50 ms until then.
            let wake = challenged ? min(current.instant, ContinuousClock.now.advanced(by: .milliseconds(50))) : current.instant
            do {
                try await Task.sleep(until: wake, clock: .continuous)
            } catch {
                return
            }
            let now = ContinuousClock.now
            let action: (challenge: Bool, reason: String)? = state.value.withLock { value in
                guard let deadline = value.deadline else { return nil }
                if deadline.instant > now { return nil }  // revalidated meanwhile
                if let revalidation, !value.challenged {
                    value.challenged = true
                    value.deadline = Deadline(instant: now.advanced(by: revalidation.grace), reason: "revalidation not answered")
                    return (true, deadline.reason)
                }
                return (false, deadline.reason)
            }
            guard let action else { continue }
            if action.challenge, let revalidation {
                logger.debug("revalidating a WebSocket in band", metadata: ["reason": .string(action.reason)])
                try? await outbound.write(.text(GatewayRevalidation.challengePrefix + revalidation.challenge))
                continue
            }
            onExpiry()
            logger.info("closing an expired WebSocket", metadata: ["reason": .string(action.reason)])
            try? await outbound.close(Self.expiredCloseCode, reason: action.reason)
            try? await upstreamOutbound.close(.goingAway, reason: "client credentials expired")
            return
        }
    }

    static func frame(_ message: WebSocketMessage) -> WebSocketOutboundWriter.OutboundFrame {
        switch message {
        case .text(let text): .text(text)
        case .binary(let buffer): .binary(buffer)
        }
    }
}
