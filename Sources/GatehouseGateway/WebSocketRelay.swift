import Foundation
import HTTPTypes
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

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
    let onExpiry: @Sendable () -> Void
    let logger: Logger

    func run(client inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async {
        do {
            try await WebSocketClient.connect(
                url: upstreamURL, configuration: .init(maxFrameSize: maxMessageSize, additionalHeaders: extraHeaders), logger: logger
            ) { upstreamInbound, upstreamOutbound, _ in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await message in inbound.messages(maxSize: maxMessageSize) {
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
                    if let deadline {
                        group.addTask {
                            do {
                                try await Task.sleep(until: deadline.instant, clock: .continuous)
                            } catch {
                                return
                            }
                            onExpiry()
                            logger.info("closing an expired WebSocket", metadata: ["reason": .string(deadline.reason)])
                            try? await outbound.close(Self.expiredCloseCode, reason: deadline.reason)
                            try? await upstreamOutbound.close(.goingAway, reason: "client credentials expired")
                        }
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

    static func frame(_ message: WebSocketMessage) -> WebSocketOutboundWriter.OutboundFrame {
        switch message {
        case .text(let text): .text(text)
        case .binary(let buffer): .binary(buffer)
        }
    }
}
