import Foundation
public import GatehouseClient
import GatehouseProtocol
public import Logging
import NIOCore

extension GatewayWebSocketClient {
    /// A WebSocket opened through KAAZING's extended handshake: the sub-protocol the upstream selected.
    public struct Opened: Sendable {
        /// The application sub-protocol the upstream selected, if any.
        public var selectedProtocol: String?
        /// The challenge the handshake answered last: the only one answered in band later.
        var answeredChallenge: String?
    }

    /// The handler of a WebSocket opened through the extended handshake: the application's messages, the writer,
    /// and what was opened.
    public typealias InBandHandler = @Sendable (
        _ messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>, _ outbound: GatewayWebSocketWriter, _ opened: Opened
    ) async throws -> Void

    /// Connects to `url` through KAAZING's extended handshake (`KaazingHandshake`), as KAAZING's own clients do:
    /// the challenges come inside the WebSocket, so that every answer of `challengeHandler` is decided on the same
    /// connection and a refusal's status is read (`403` ends with `GatewayClientError.refused(status:challenge:)`
    /// at once; a `401` after `maxAttempts` answers with `retryLimitReached`). The gateway counts each answer once.
    /// `protocols` are the application's sub-protocols, offered to the upstream; `handler` gets the application's
    /// messages, the writer and what was opened; the gateway's in-band revalidation challenges (`revalidate: true`
    /// realms) are answered with the same `challengeHandler` — only a challenge equal to the one the handshake
    /// answered (a connection that was not challenged answers none; the frame is dropped and a warning logged), and
    /// when the handler gives up nothing is sent (the gateway closes the connection after its grace period).
    ///
    /// A gateway that speaks the extended handshake (a Gatehouse gateway, or KAAZING's) starts it with its balancer
    /// frame; a server whose first message is anything else opened a plain WebSocket, which goes on as one (its
    /// message is the application's); one that sends nothing within `handshakeTimeout` fails the connection with a
    /// `transport` error. An upgrade answered without `101` (a proxy that does not pass WebSockets) throws
    /// `GatewayClientError.webSocketBlocked(status:)`: ``connectEmulated(url:challengeHandler:protocols:maxAttempts:configuration:logger:handler:)``
    /// gets through such a proxy.
    @discardableResult
    public static func connectInBand(
        url: String, challengeHandler: (any HTTPChallengeHandler)? = nil, protocols: [String] = [], maxAttempts: Int = 2,
        handshakeTimeout: Duration = .seconds(10), configuration: GatewayWebSocketConfiguration = .init(),
        logger: Logger = Logger(label: "gateway-websocket-client"), handler: @escaping InBandHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        guard var components = URLComponents(string: url), let location = URL(string: url), components.host != nil else {
            throw GatewayClientError.transport("\(url) is not a WebSocket URL")
        }
        let answers = try challengeHandler.map { try WebSocketChallengeAnswers($0, url: url, maxAttempts: maxAttempts) }
        let target = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        // KAAZING's native clients mark their upgrade; the gateway never forwards the mark.
        components.percentEncodedQuery = (components.percentEncodedQuery.map { $0 + "&" } ?? "") + KaazingHandshake.libraryParameter + "=Y"
        guard let upgradeURL = components.string else { throw GatewayClientError.transport("\(url) is not a WebSocket URL") }
        var upgrade = configuration
        upgrade.protocols = [KaazingHandshake.protocolName] + protocols
        upgrade.handshakeTimeout = handshakeTimeout
        let connection: GatewayWebSocketConnection
        switch try await open(url: upgradeURL, configuration: upgrade) {
        case .refused(let refusal):
            // A gateway answers KAAZING's handshake with 101 and challenges inside it: another answer is something
            // on the way that does not let the WebSocket through.
            throw GatewayClientError.webSocketBlocked(status: refusal.status)
        case .upgraded(let opened):
            connection = opened
        }
        let outbound = connection.outbound
        // A gateway that does not start the handshake in time is left.
        let started = HandshakeStarted()
        let timer = Task {
            try? await Task.sleep(for: handshakeTimeout)
            if !Task.isCancelled, !started.value { await connection.abort() }
        }
        defer { timer.cancel() }
        var iterator = connection.messages.makeAsyncIterator()
        let first: GatewayWebSocketMessage
        do {
            guard let message = try await iterator.next() else {
                throw GatewayClientError.transport("\(url): the gateway did not start KAAZING's extended handshake")
            }
            first = message
            started.set()
            timer.cancel()
        } catch {
            await connection.abort()
            throw error
        }
        // The balancer frame starts the handshake; anything else is the application's first message from a server
        // that opened a plain WebSocket (as KAAZING's clients go on with one).
        var pending: GatewayWebSocketMessage?
        let opened: Opened
        do {
            if case .binary(let balancer) = first, balancer.readableBytesView.elementsEqual(KaazingHandshake.noRedirect) {
                opened = try await handshake(target: target, protocols: protocols, answers: answers, location: location,
                                             iterator: &iterator, outbound: outbound)
            } else {
                pending = first
                opened = Opened(selectedProtocol: nil, answeredChallenge: nil)
            }
        } catch {
            try? await outbound.close(.normalClosure)
            _ = try? await connection.closed.get()
            throw error
        }
        let (messages, continuation) = AsyncThrowingStream<GatewayWebSocketMessage, any Error>.makeStream()
        let revalidation = Revalidation(challengeHandler: challengeHandler, expected: opened.answeredChallenge, location: location, logger: logger)
        // The connection's messages, the in-band challenges taken out, handed on to the handler.
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await handler(messages, outbound, opened)
                } catch {
                    try? await outbound.close(.normalClosure)
                    throw error
                }
                // Ends the reading below: the gateway answers the close.
                try? await outbound.close(.normalClosure)
            }
            do {
                while true {
                    let next: GatewayWebSocketMessage?
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
            do {
                try await group.waitForAll()
            } catch {
                try? await outbound.close(.normalClosure)
                _ = try? await connection.closed.get()
                throw error
            }
            try? await outbound.close(.normalClosure)
            return try await connection.closed.get()
        }
    }

    /// The requests inside the handshake until the inner `101`: each challenge answered with `answers`.
    private static func handshake(
        target: String, protocols: [String], answers: WebSocketChallengeAnswers?, location: URL,
        iterator: inout AsyncThrowingStream<GatewayWebSocketMessage, any Error>.AsyncIterator, outbound: GatewayWebSocketWriter
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
    private static func answer(_ iterator: inout AsyncThrowingStream<GatewayWebSocketMessage, any Error>.AsyncIterator) async throws -> KaazingHandshake.Response {
        let next = try await iterator.next()
        guard case .binary(let bytes) = next else {
            throw GatewayClientError.transport(next == nil ? "the gateway closed the connection inside KAAZING's extended handshake"
                                                           : "the gateway ended KAAZING's extended handshake without an answer")
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

    /// Connects like ``connect(url:challengeHandler:maxAttempts:configuration:logger:handler:)`` and also answers the
    /// gateway's in-band challenges (a realm with `revalidate: true`) with the same `challengeHandler`, so that the
    /// connection outlives its credentials. `handler` gets the application's messages only.
    ///
    /// The handshake is KAAZING's extended one (``connectInBand(url:challengeHandler:protocols:maxAttempts:handshakeTimeout:configuration:logger:handler:)``):
    /// the first challenge and the later ones all come inside the WebSocket. Only a challenge equal to the one its
    /// handshake answered is answered in band: a connection that was not challenged, or a challenge for another
    /// realm, is never answered (the frame is dropped and a warning logged). When the handler gives up on an in-band
    /// challenge (returns `nil`), nothing is sent and the gateway closes the connection after its grace period.
    @discardableResult
    public static func connectRevalidating(
        url: String, challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2,
        configuration: GatewayWebSocketConfiguration = .init(), logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: @escaping GatewayWebSocketHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        try await connectInBand(url: url, challengeHandler: challengeHandler, maxAttempts: maxAttempts, configuration: configuration,
                                logger: logger) { messages, outbound, _ in
            try await handler(messages, outbound)
        }
    }
}

/// Whether the gateway started the extended handshake (read by its timer's task).
private final class HandshakeStarted: @unchecked Sendable {
    private let lock = NSLock()
    private var started = false
    var value: Bool { lock.withLock { started } }
    func set() { lock.withLock { started = true } }
}
