#if canImport(Darwin)
import Foundation
import GatehouseProtocol

/// A WebSocket through a Gatehouse gateway on Apple platforms, over `URLSessionWebSocketTask`, with the same
/// challenge handlers as HTTP (``BasicChallengeHandler``, ``TokenChallengeHandler``, ``DispatchChallengeHandler``,
/// ...). On Linux, `GatewayWebSocketClient` of `GatehouseClientNIO` does the same over SwiftNIO.
///
/// The handshake is sent without credentials first; a `401` refusal's `WWW-Authenticate` goes to the challenge
/// handler and the handshake is sent again with its `Authorization`, up to `maxAttempts` answers. Once open, the
/// gateway's in-band challenges (a realm with `revalidate: true`) are answered with the same handler — only a
/// challenge equal to the one the handshake answered — and never reach ``messages``.
///
/// ```swift
/// let socket = try await URLSessionGatewayWebSocket.connect(
///     to: URL(string: "wss://gateway.example.com/ws/echo")!,
///     challengeHandler: BasicChallengeHandler(loginHandler: LoginSheet()))
/// try await socket.send("hello")
/// for try await message in socket.messages { show(message) }
/// ```
///
/// `@unchecked Sendable`: its state is the `URLSessionWebSocketTask` (thread-safe) and constants.
public final class URLSessionGatewayWebSocket: @unchecked Sendable {
    /// The underlying task.
    public let task: URLSessionWebSocketTask
    /// The application's messages (in-band challenges removed); it ends when the connection closes.
    public let messages: AsyncThrowingStream<URLSessionWebSocketTask.Message, any Error>
    private let reader: Task<Void, Never>

    private init(task: URLSessionWebSocketTask, location: URL, handshakeChallenge: String?, challengeHandler: any HTTPChallengeHandler) {
        self.task = task
        let (messages, continuation) = AsyncThrowingStream<URLSessionWebSocketTask.Message, any Error>.makeStream()
        self.messages = messages
        reader = Task {
            do {
                while true {
                    let message = try await task.receive()
                    if case .string(let text) = message, let challenge = InBandRevalidation.challenge(in: text) {
                        // Only the realm the handshake answered may ask again; anything else is dropped.
                        guard challenge == handshakeChallenge else { continue }
                        let request = ChallengeRequest(location: location, challenge: challenge)
                        if challengeHandler.canHandle(request), let response = try? await challengeHandler.respond(to: request) {
                            try await task.send(.string(InBandRevalidation.answerPrefix + response.credentials))
                        }
                        continue
                    }
                    continuation.yield(message)
                }
            } catch {
                if task.closeCode == .normalClosure || task.closeCode == .goingAway || Task.isCancelled {
                    continuation.finish()
                } else {
                    continuation.finish(throwing: error)
                }
            }
        }
        continuation.onTermination = { [reader] _ in reader.cancel() }
    }

    deinit {
        reader.cancel()
    }

    /// Opens a WebSocket to `url` (`ws://` or `wss://`), answering the handshake's challenges with
    /// `challengeHandler`.
    ///
    /// - Parameters:
    ///   - url: the gateway's WebSocket URL.
    ///   - challengeHandler: answers `401` challenges of the handshake and in-band challenges of the connection.
    ///   - maxAttempts: how many answers may be refused before giving up with `retryLimitReached`.
    ///   - headers: extra header fields of the handshake.
    ///   - session: the session (its cookies and configuration); `.shared` by default.
    /// - Throws: ``GatewayClientError``: `retryLimitReached`, `cancelled` (the handler gave up, with its reason as
    ///   the cause), `unsupportedChallenge`, `refused` (another status), `transport`.
    public static func connect(
        to url: URL, challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2, headers: [String: String] = [:],
        session: URLSession = .shared
    ) async throws(GatewayClientError) -> URLSessionGatewayWebSocket {
        let loop = GatewayChallengeLoop(challengeHandler: challengeHandler, maxAttempts: maxAttempts)
        var state = GatewayChallengeLoop.State()
        var authorization: String?
        var answered: String?
        while true {
            var request = URLRequest(url: url)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
            let task = session.webSocketTask(with: request)
            task.resume()
            let failure = await opened(task)
            guard let failure else {
                return URLSessionGatewayWebSocket(task: task, location: url, handshakeChallenge: answered, challengeHandler: challengeHandler)
            }
            task.cancel(with: .normalClosure, reason: nil)
            if Task.isCancelled { throw .transport("cancelled", underlying: CancellationError()) }
            // The refusal: the handshake's own response where the platform keeps it, else the same request as a
            // plain GET (the gateway admits both alike).
            var refusal = task.response as? HTTPURLResponse
            if refusal == nil { refusal = try? await probe(request, session: session) }
            guard let refusal else { throw .transport("the WebSocket handshake to \(url.absoluteString) failed", underlying: failure) }
            let challenge = refusal.value(forHTTPHeaderField: "WWW-Authenticate")
            guard refusal.statusCode >= 400 else {
                throw .transport("the WebSocket handshake to \(url.absoluteString) failed though the gateway admits it", underlying: failure)
            }
            guard refusal.statusCode == 401, let challenge else { throw .refused(status: refusal.statusCode, challenge: challenge) }
            authorization = try await loop.answer(challenge, location: url, state: &state)
            answered = challenge
        }
    }

    /// `request` as a plain `GET` over `http`/`https`: how the gateway answers it without the upgrade.
    private static func probe(_ request: URLRequest, session: URLSession) async throws -> HTTPURLResponse? {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.scheme = components.scheme == "wss" ? "https" : "http"
        var probe = request
        probe.url = components.url
        probe.httpMethod = "GET"
        let (_, response) = try await session.data(for: probe)
        return response as? HTTPURLResponse
    }

    /// Waits until the handshake is done (a ping answered); the error when it failed.
    private static func opened(_ task: URLSessionWebSocketTask) async -> (any Error)? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
                task.sendPing { error in continuation.resume(returning: error) }
            }
        } onCancel: {
            task.cancel(with: .goingAway, reason: nil)
        }
    }

    /// Sends a text message.
    public func send(_ text: String) async throws {
        try await task.send(.string(text))
    }

    /// Sends a binary message.
    public func send(_ data: Data) async throws {
        try await task.send(.data(data))
    }

    /// Closes the connection with `code` (normal closure by default).
    public func close(_ code: URLSessionWebSocketTask.CloseCode = .normalClosure, reason: String? = nil) {
        reader.cancel()
        task.cancel(with: code, reason: reason.map { Data($0.utf8) })
    }
}
#endif
