public import GatehouseClient
public import Logging
import NIOCore

/// The handler of an open WebSocket: the server's messages and the writer.
public typealias GatewayWebSocketHandler = @Sendable (
    _ messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>, _ outbound: GatewayWebSocketWriter
) async throws -> Void

/// Opens a WebSocket through a Gatehouse gateway (or to any server), answering `401` challenges on the handshake:
/// the SDK's one WebSocket client, on SwiftNIO's NIOWebSocket, on every platform.
///
/// Each upgrade request that the server refuses is read — its status, its `WWW-Authenticate` — so the attempt is
/// its own probe: a `401` with a challenge is answered by `answer` (which returns the `Authorization` value, or
/// throws to give up, e.g. the SDK's `GatewayChallengeLoop` at its retry limit) and the upgrade asked again with it;
/// any other refusal (a `403` for a user without the service's role, a `502` when the upstream is down) ends with
/// `GatewayClientError.refused(status:challenge:)`. The gateway counts each answered attempt once.
public enum GatewayWebSocketClient {
    /// Asks `url` for a WebSocket once with `configuration`: the open connection, or the server's refusal.
    public static func open(url: String, configuration: GatewayWebSocketConfiguration = .init()) async throws -> GatewayWebSocketOutcome {
        try await GatewayWebSocketConnector.open(try GatewayWebSocketURL(url), configuration: configuration)
    }

    /// Sends an upgrade request with `authorization` and returns the status and `WWW-Authenticate` of a refusal
    /// (`101` when the server upgraded: the connection is then closed at once).
    public static func probe(url: String, authorization: String? = nil,
                             configuration: GatewayWebSocketConfiguration = .init()) async throws -> (status: Int, challenge: String?) {
        var configuration = configuration
        if let authorization { configuration.headers.append(("Authorization", authorization)) }
        switch try await open(url: url, configuration: configuration) {
        case .refused(let refusal):
            return (refusal.status, refusal.challenge)
        case .upgraded(let connection):
            await connection.abort()
            return (101, nil)
        }
    }

    /// Connects to `url` without answering challenges (a refusal ends with `GatewayClientError.refused`), runs
    /// `handler` and returns the server's close frame, if any.
    @discardableResult
    public static func connect(
        url: String, configuration: GatewayWebSocketConfiguration = .init(), handler: GatewayWebSocketHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        switch try await open(url: url, configuration: configuration) {
        case .refused(let refusal):
            throw GatewayClientError.refused(status: refusal.status, challenge: refusal.challenge)
        case .upgraded(let connection):
            return try await connection.run(handler)
        }
    }

    /// Connects to `url`, answering challenges with `answer`, then runs `handler` until the connection closes;
    /// returns the close frame the server sent, if any. Every frame reaches `handler`, in-band challenges included:
    /// only ``connectRevalidating(url:challengeHandler:maxAttempts:configuration:logger:handler:)`` answers those.
    @discardableResult
    public static func connect(
        url: String, configuration: GatewayWebSocketConfiguration = .init(), logger: Logger = Logger(label: "gateway-websocket-client"),
        answer: @escaping @Sendable (_ challenge: String) async throws -> String, handler: GatewayWebSocketHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        let connection = try await openAnswering(url: url, configuration: configuration, logger: logger, answer: answer)
        return try await connection.run(handler)
    }

    /// Connects to `url`, answering the handshake's challenges with the SDK's `challengeHandler` (a
    /// `BasicChallengeHandler`, a `TokenChallengeHandler`, a `DispatchChallengeHandler`, ...), giving up with
    /// `GatewayClientError.retryLimitReached` after `maxAttempts` refused answers.
    @discardableResult
    public static func connect(
        url: String, challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2,
        configuration: GatewayWebSocketConfiguration = .init(), logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: GatewayWebSocketHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        let answers = try WebSocketChallengeAnswers(challengeHandler, url: url, maxAttempts: maxAttempts)
        return try await connect(url: url, configuration: configuration, logger: logger, answer: answers.answer, handler: handler)
    }

    /// The challenge loop: upgrade requests until one is accepted, each `401` answered with `answer`.
    static func openAnswering(
        url: String, configuration: GatewayWebSocketConfiguration, logger: Logger,
        answer: @Sendable (_ challenge: String) async throws -> String
    ) async throws -> GatewayWebSocketConnection {
        var authorization: String?
        while true {
            var attempt = configuration
            if let authorization { attempt.headers.append(("Authorization", authorization)) }
            switch try await open(url: url, configuration: attempt) {
            case .upgraded(let connection):
                return connection
            case .refused(let refusal):
                guard refusal.status == 401, let challenge = refusal.challenge else {
                    throw GatewayClientError.refused(status: refusal.status, challenge: refusal.challenge)
                }
                logger.debug("the WebSocket handshake was challenged", metadata: ["challenge": "\(challenge)", "answered": "\(authorization != nil)"])
                // A wrong answer is asked again; the answers' retry limit ends this.
                authorization = try await answer(challenge)
            }
        }
    }
}
