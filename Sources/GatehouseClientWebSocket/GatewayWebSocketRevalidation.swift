import Foundation
import GatehouseClient
import GatehouseProtocol
import Logging

/// Answers the gateway's in-band revalidation challenges of an open WebSocket with the handshake's handler.
struct Revalidation: Sendable {
    let challengeHandler: (any HTTPChallengeHandler)?
    /// The challenge the handshake answered: the only one answered.
    let expected: String?
    let location: URL
    let logger: Logger

    func answer(_ challenge: String, outbound: GatewayWebSocketWriter) async {
        let request = ChallengeRequest(location: location, challenge: challenge)
        guard let challengeHandler, challenge == expected, challengeHandler.canHandle(request) else {
            logger.warning("ignored an in-band challenge that the handshake did not ask")
            return
        }
        if let response = try? await challengeHandler.respond(to: request) {
            try? await outbound.write(.text(InBandRevalidation.answerPrefix + response.credentials))
        }
    }
}
