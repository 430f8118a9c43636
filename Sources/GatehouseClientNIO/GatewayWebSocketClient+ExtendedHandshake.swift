import Foundation
public import GatehouseClient
import GatehouseProtocol
import HTTPTypes
public import HummingbirdWSClient
public import Logging
import NIOCore
import Synchronization

extension GatewayWebSocketClient {
    /// A WebSocket opened through KAAZING's extended handshake: the sub-protocol the upstream selected.
    public struct Opened: Sendable {
        /// The application sub-protocol the upstream selected, if any.
        public var selectedProtocol: String?
        /// The challenge the handshake answered last: the only one answered in band later.
        var answeredChallenge: String?
    }

    /// Connects to `url` through KAAZING's extended handshake (`KaazingHandshake`), as KAAZING's own clients do:
    /// the challenges come inside the WebSocket, so that every answer of `challengeHandler` is decided on the same
    /// connection and a refusal's status is read (`403` ends with `GatewayClientError.refused(status:challenge:)`
    /// at once; a `401` after `maxAttempts` answers with `retryLimitReached`). No probe and no `OPTIONS` check: the
    /// gateway counts each answer once. `protocols` are the application's sub-protocols, offered to the upstream;
    /// `handler` gets the application's messages, the writer and what was opened; the gateway's in-band
    /// revalidation challenges (`revalidate: true` realms) are answered with the same `challengeHandler` — only a
    /// challenge equal to the one the handshake answered (a connection that was not challenged answers none; the
    /// frame is dropped and a warning logged), and when the handler gives up nothing is sent (the gateway closes the
    /// connection after its grace period).
    ///
    /// A gateway that speaks the extended handshake (a Gatehouse gateway, or KAAZING's) starts it with its balancer
    /// frame; a server whose first message is anything else opened a plain WebSocket, which goes on as one (its
    /// message is the application's); one that sends nothing within `handshakeTimeout` fails the connection with a
    /// `transport` error.
    @discardableResult
    public static func connectInBand(
        url: String, challengeHandler: (any HTTPChallengeHandler)? = nil, protocols: [String] = [], maxAttempts: Int = 2,
        handshakeTimeout: Duration = .seconds(10), logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: @escaping @Sendable (_ messages: AsyncThrowingStream<WebSocketMessage, any Error>, _ outbound: WebSocketOutboundWriter,
                                      _ opened: Opened) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        guard var components = URLComponents(string: url), let location = URL(string: url), components.host != nil else {
            throw GatewayClientError.transport("\(url) is not a WebSocket URL")
        }
        let answers = try challengeHandler.map { try WebSocketChallengeAnswers($0, url: url, maxAttempts: maxAttempts) }
        let target = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        // KAAZING's native clients mark their upgrade; the gateway never forwards the mark.
        components.percentEncodedQuery = (components.percentEncodedQuery.map { $0 + "&" } ?? "") + KaazingHandshake.libraryParameter + "=Y"
        guard let upgradeURL = components.string else { throw GatewayClientError.transport("\(url) is not a WebSocket URL") }
        var headers = HTTPFields()
        headers[.secWebSocketProtocol] = ([KaazingHandshake.protocolName] + protocols).joined(separator: ", ")
        let state = HandshakeState()
        let close: WebSocketCloseFrame?
        do {
            close = try await WebSocketClient.connect(url: upgradeURL, configuration: .init(additionalHeaders: headers), logger: logger) {
                inbound, outbound, _ in
                // A gateway that does not start the handshake in time is left.
                let timer = Task {
                    try? await Task.sleep(for: handshakeTimeout)
                    if !Task.isCancelled, !state.started.withLock({ $0 }) { try? await outbound.close(.policyViolation, reason: "no extended handshake") }
                }
                defer { timer.cancel() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
                    do {
                        guard let first = try await iterator.next() else {
                            throw GatewayClientError.transport("\(url): the gateway did not start KAAZING's extended handshake")
                        }
                        state.started.withLock { $0 = true }
                        timer.cancel()
                        // The balancer frame starts the handshake; anything else is the application's first message
                        // from a server that opened a plain WebSocket (as KAAZING's clients go on with one).
                        var plainFirst: WebSocketMessage?
                        let opened: Opened
                        if case .binary(let balancer) = first, balancer.readableBytesView.elementsEqual(KaazingHandshake.noRedirect) {
                            opened = try await handshake(target: target, protocols: protocols, answers: answers, location: location,
                                                         iterator: &iterator, outbound: outbound)
                        } else {
                            plainFirst = first
                            opened = Opened(selectedProtocol: nil, answeredChallenge: nil)
                        }
                        let (messages, continuation) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream()
                        let revalidation = Revalidation(challengeHandler: challengeHandler, expected: opened.answeredChallenge, location: location,
                                                        logger: logger)
                        group.addTask {
                            do {
                                try await handler(messages, outbound, opened)
                            } catch {
                                try? await outbound.close(.normalClosure, reason: nil)
                                throw error
                            }
                            // Ends the reading below: the gateway answers the close.
                            try? await outbound.close(.normalClosure, reason: nil)
                        }
                        do {
                            var pending = plainFirst
                            while true {
                                let next: WebSocketMessage?
                                if let taken = pending.take() { next = taken } else { next = try await iterator.next() }
                                guard let message = next else { break }
                                if case .text(let text) = message, let challenge = InBandRevalidation.challenge(in: text) {
                                    await revalidation.answer(challenge, outbound: outbound)
                                    continue
                                }
                                continuation.yield(message)
                            }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                        try await group.waitForAll()
                    } catch {
                        state.outcome.withLock { $0 = error }
                        group.cancelAll()
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                }
            }
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            throw GatewayClientError.transport("\(url): the gateway refused KAAZING's extended handshake")
        }
        if let error = state.outcome.withLock({ $0 }) { throw error }
        if !state.started.withLock({ $0 }) { throw GatewayClientError.transport("\(url): the gateway did not start KAAZING's extended handshake") }
        return close
    }

    /// The requests inside the handshake until the inner `101`: each challenge answered with `answers`.
    private static func handshake(
        target: String, protocols: [String], answers: WebSocketChallengeAnswers?, location: URL,
        iterator: inout WebSocketInboundMessageStream.AsyncIterator, outbound: WebSocketOutboundWriter
    ) async throws -> Opened {
        var authorization: String?
        var answered: String?
        while true {
            var fields: [(name: String, value: String)] = [("Sec-WebSocket-Protocol", protocols.joined(separator: ","))]
            if let authorization { fields.append(("Authorization", authorization)) }
            let request = KaazingHandshake.Request(target: target, fields: fields)
            try await outbound.write(.text(String(decoding: request.encoded, as: UTF8.self)))
            let response = try await answer(&iterator)
            switch response.status {
            case 101:
                guard case .binary(let balancer) = try await iterator.next(), balancer.readableBytesView.elementsEqual(KaazingHandshake.noRedirect) else {
                    throw GatewayClientError.transport("\(location): no balancer frame after the handshake's 101")
                }
                return Opened(selectedProtocol: response.value(of: "Sec-WebSocket-Protocol"), answeredChallenge: answered)
            case 401:
                let challenge = response.value(of: "WWW-Authenticate")
                guard let answers, let challenge else { throw GatewayClientError.refused(status: 401, challenge: challenge) }
                authorization = try await answers.answer(challenge)
                answered = challenge
            default:
                throw GatewayClientError.refused(status: response.status, challenge: response.value(of: "WWW-Authenticate"))
            }
        }
    }

    /// An answer inside the handshake: a binary message with the response, then the empty one that ends it.
    private static func answer(_ iterator: inout WebSocketInboundMessageStream.AsyncIterator) async throws -> KaazingHandshake.Response {
        guard case .binary(let bytes) = try await iterator.next() else {
            throw GatewayClientError.transport("the gateway ended KAAZING's extended handshake without an answer")
        }
        let response: KaazingHandshake.Response
        do {
            response = try KaazingHandshake.Response(parsing: bytes.readableBytesView)
        } catch {
            throw GatewayClientError.transport("an unreadable answer inside KAAZING's extended handshake: \(error)")
        }
        guard case .binary(let end) = try await iterator.next(), end.readableBytes == 0 else {
            throw GatewayClientError.transport("an answer inside KAAZING's extended handshake without its empty frame")
        }
        return response
    }
}

/// Whether the gateway started the handshake, and what ended it (thrown after the client returns: its handler's
/// errors are not its caller's).
private final class HandshakeState: Sendable {
    let started = Mutex(false)
    let outcome = Mutex<(any Error)?>(nil)
}

/// Answers the gateway's in-band revalidation challenges of an open WebSocket with the handshake's handler.
private struct Revalidation: Sendable {
    let challengeHandler: (any HTTPChallengeHandler)?
    /// The challenge the handshake answered: the only one answered.
    let expected: String?
    let location: URL
    let logger: Logger

    func answer(_ challenge: String, outbound: WebSocketOutboundWriter) async {
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
