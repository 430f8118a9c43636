import Foundation
import HTTPTypes
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The text frames of in-band revalidation: the gateway sends `challengePrefix` + the realm's `WWW-Authenticate`
/// value; the client answers `answerPrefix` + an `Authorization` value. Neither reaches the upstream or the
/// application (``GatewayWebSocketClient/connectRevalidating(url:challengeHandler:maxAttempts:logger:handler:)``
/// filters them). The leading U+0001 keeps them apart from application text.
public enum GatewayRevalidation {
    public static let challengePrefix = "\u{1}gatehouse-challenge "
    public static let answerPrefix = "\u{1}gatehouse-authorization "
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
    let extraHeaders: HTTPFields
    let maxMessageSize: Int
    let deadline: Deadline?
    let revalidation: Revalidation?
    let onExpiry: @Sendable () -> Void
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
                url: upstreamURL, configuration: .init(maxFrameSize: maxMessageSize, additionalHeaders: extraHeaders), logger: logger
            ) { upstreamInbound, upstreamOutbound, _ in
                let state = State(deadline)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await message in inbound.messages(maxSize: maxMessageSize) {
                                if let revalidation, case .text(let text) = message, text.hasPrefix(GatewayRevalidation.answerPrefix) {
                                    let authorization = String(text.dropFirst(GatewayRevalidation.answerPrefix.count))
                                    guard let subject = await revalidation.check(authorization) else {
                                        onExpiry()
                                        logger.info("closing a WebSocket whose revalidation failed")
                                        try? await outbound.close(Self.expiredCloseCode, reason: "revalidation failed")
                                        break
                                    }
                                    let next = revalidation.deadline(subject)
                                    state.value.withLock { $0 = .init(deadline: next, challenged: false) }
                                    continue
                                }
                                try await upstreamOutbound.write(Self.frame(message))
                            }
                        } catch {}
                        try? await upstreamOutbound.close(.normalClosure, reason: nil)
                    }
                    group.addTask {
                        do {
                            for try await message in upstreamInbound.messages(maxSize: maxMessageSize) {
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
            logger.warning("WebSocket upstream failed", metadata: ["upstream": .string(upstreamURL), "error": .string("\(error)")])
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
