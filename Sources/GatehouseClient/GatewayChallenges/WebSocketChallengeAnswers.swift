import Foundation
import GatehouseProtocol

/// The SDK's gateway challenge loop for one WebSocket connection attempt: answers each `WWW-Authenticate` of the
/// handshake and counts the answers, so that the retry limit covers the whole attempt. Shared by the SDK's
/// WebSocket client (`GatewayWebSocketClient` of `GatehouseClientWebSocket`).
public final class WebSocketChallengeAnswers: Sendable {
    let loop: GatewayChallengeLoop
    let location: URL
    private let state = Locked(GatewayChallengeLoop.State())

    /// A loop answering with `handler` for `url`, at most `maxAttempts` times.
    public init(_ handler: any HTTPChallengeHandler, url: String, maxAttempts: Int = 2) throws {
        guard let location = URL(string: url), location.host != nil else {
            throw GatewayClientError.transport("\(url) is not a WebSocket URL")
        }
        loop = GatewayChallengeLoop(challengeHandler: handler, maxAttempts: maxAttempts)
        self.location = location
    }

    /// The answers sent so far.
    public var attempts: Int { state.withLock { $0.attempts } }

    /// The `Authorization` value for `challenge`, or the error that ends the attempt.
    public func answer(_ challenge: String) async throws -> String {
        var current = state.withLock { $0 }
        let value = try await loop.answer(challenge, location: location, state: &current)
        state.withLock { [current] in $0 = current }
        return value
    }
}
