import Foundation
public import GatehouseClient
import GatehouseProtocol
public import Logging
import NIOCore
import NIOHTTP1

extension GatewayWebSocketClient {
    /// Connects to `url` over KAAZING's emulated WebSocket (`wseb-1.0`, its binary encoding),
    /// for a network whose proxies do not let a WebSocket upgrade through: plain HTTP requests to the same gateway
    /// service, as KAAZING's clients fall back to.
    ///
    /// The create (`POST <path>/;e/cb`) is decided by the service's realm like the upgrade: each `401` is answered by
    /// `challengeHandler` (at most `maxAttempts` refused answers, then `retryLimitReached`), any other refusal ends with
    /// `GatewayClientError.refused(status:challenge:)`. Then the server's messages come on downstream responses read as
    /// they arrive, each next one asked when the gateway ends the one before (`RECONNECT`), and each message written
    /// is an upstream request, in order. The gateway's upstream and downstream URLs are used on `url`'s origin (a
    /// proxy in between may have rewritten the `Host` they were built from). `handler` is called as for
    /// ``connectInBand(url:challengeHandler:protocols:maxAttempts:handshakeTimeout:configuration:logger:handler:)``;
    /// the close codes are not carried (the gateway closes the upstream with `1000`): a WebSocket the gateway closed
    /// returns `1000`, one whose downstream broke throws.
    @discardableResult
    public static func connectEmulated(
        url: String, challengeHandler: (any HTTPChallengeHandler)? = nil, protocols: [String] = [], maxAttempts: Int = 2,
        configuration: GatewayWebSocketConfiguration = .init(), logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: @escaping InBandHandler
    ) async throws -> GatewayWebSocketCloseFrame? {
        let location = try GatewayWebSocketURL(url)
        let answers = try challengeHandler.map { try WebSocketChallengeAnswers($0, url: url, maxAttempts: maxAttempts) }
        let sequence = UInt64.random(in: 0..<(1 << 31))
        let created = try await create(location, protocols: protocols, sequence: sequence, answers: answers, configuration: configuration, logger: logger)
        let upstream = EmulatedUpstream(url: created.upstream, sequence: sequence, configuration: configuration)
        let outbound = GatewayWebSocketWriter(emulated: upstream)
        let opened = Opened(selectedProtocol: created.selectedProtocol, answeredChallenge: nil)
        let (messages, continuation) = AsyncThrowingStream<GatewayWebSocketMessage, any Error>.makeStream()
        let downstream = EmulatedDownstream(url: created.downstream, sequence: sequence, configuration: configuration)
        // The first downstream is asked, and its head read, before any message goes upstream: until the gateway has a
        // downstream the session is half-open and takes little (64 KiB of upstream bodies), as KAAZING's own client
        // waits for its downstream before it opens.
        let first = try await downstream.next()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await handler(messages, outbound, opened)
                } catch {
                    try? await upstream.close()
                    downstream.closeSoon(after: configuration.handshakeTimeout)
                    throw error
                }
                // The gateway answers the close by ending the downstream with `CLOSE`; it is waited for a while.
                try? await upstream.close()
                downstream.closeSoon(after: configuration.handshakeTimeout)
            }
            let closedByGateway: Bool
            do {
                closedByGateway = try await downstream.read(first) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
                upstream.end()
                try? await group.waitForAll()
                throw error
            }
            upstream.end()
            try await group.waitForAll()
            return closedByGateway ? GatewayWebSocketCloseFrame(closeCode: .normalClosure) : nil
        }
    }

    /// What a create answered: the session's upstream and downstream, and the sub-protocol the upstream selected.
    private struct Created {
        var upstream: GatewayWebSocketURL
        var downstream: GatewayWebSocketURL
        var selectedProtocol: String?
    }

    /// The create, each `401` answered, until the gateway creates the session (`201`).
    private static func create(
        _ location: GatewayWebSocketURL, protocols: [String], sequence: UInt64, answers: WebSocketChallengeAnswers?,
        configuration: GatewayWebSocketConfiguration, logger: Logger
    ) async throws -> Created {
        var target = location
        let path = location.target.prefix { $0 != "?" }
        let query = location.target.firstIndex(of: "?").map { location.target[location.target.index(after: $0)...] }
        let random = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        target.target = (path.hasSuffix("/") ? String(path.dropLast()) : String(path)) + "/" + KaazingEmulation.marker + "/cb?"
            + (query.map { $0 + "&" } ?? "") + ".kn=" + random
        var authorization: String?
        while true {
            var headers: [(name: String, value: String)] = [("X-WebSocket-Version", KaazingEmulation.version), ("X-Sequence-No", String(sequence))]
            if !protocols.isEmpty { headers.append(("X-WebSocket-Protocol", protocols.joined(separator: ", "))) }
            if let authorization { headers.append(("Authorization", authorization)) }
            headers += configuration.headers
            let response = try await OneShotHTTPRequest.send(.POST, url: target, headers: headers, configuration: configuration)
            let challenge = response.head.headers.first(name: "WWW-Authenticate")
            switch response.head.status.code {
            case 201:
                let lines = String(decoding: response.body, as: UTF8.self).split(whereSeparator: \.isNewline)
                guard lines.count >= 2, let upstream = sessionURL(String(lines[0]), on: location),
                      let downstream = sessionURL(String(lines[1]), on: location) else {
                    throw GatewayClientError.transport("\(location.hostField) created an emulated WebSocket without its two URLs")
                }
                return Created(upstream: upstream, downstream: downstream, selectedProtocol: response.head.headers.first(name: "X-WebSocket-Protocol"))
            case 401:
                guard let answers, let challenge else { throw GatewayClientError.refused(status: 401, challenge: challenge) }
                logger.debug("the emulated WebSocket's create was challenged", metadata: ["challenge": "\(challenge)", "answered": "\(authorization != nil)"])
                authorization = try await answers.answer(challenge)
            default:
                throw GatewayClientError.refused(status: Int(response.head.status.code), challenge: challenge)
            }
        }
    }

    /// The path and query of a URL the gateway handed back, on `location`'s host, port and scheme.
    private static func sessionURL(_ text: String, on location: GatewayWebSocketURL) -> GatewayWebSocketURL? {
        guard let handed = try? GatewayWebSocketURL(text), handed.target.contains("/" + KaazingEmulation.marker + "/") else { return nil }
        var url = location
        url.target = handed.target
        return url
    }
}

/// The downstream side of an emulated WebSocket: one long response after another, read as it arrives.
private final class EmulatedDownstream: Sendable {
    private let url: GatewayWebSocketURL
    private let configuration: GatewayWebSocketConfiguration
    /// The response being read, whether the session is being closed, and the last downstream's sequence number.
    private let current: Locked<(response: OneShotHTTPRequest.StreamedResponse?, closing: Bool, timer: Task<Void, Never>?, sequence: UInt64)>

    /// The gateway sends a `NOP` every 20 s while a session is open: a downstream silent for three is gone.
    static let idleTimeout = Duration.seconds(60)

    init(url: GatewayWebSocketURL, sequence: UInt64, configuration: GatewayWebSocketConfiguration) {
        self.url = url
        current = Locked((nil, false, nil, sequence))
        self.configuration = configuration
    }

    /// Asks the next downstream response (`.ksn`, the sequence number after the last) and reads its head: a refusal
    /// throws.
    func next() async throws -> OneShotHTTPRequest.StreamedResponse {
        let sequence = current.withLock { state in
            state.sequence += 1
            return state.sequence
        }
        var next = url
        next.target += (next.target.contains("?") ? "&" : "?") + ".ksn=\(sequence)"
        let response = try await OneShotHTTPRequest.stream(.GET, url: next, headers: configuration.headers, configuration: configuration,
                                                            idleTimeout: Self.idleTimeout)
        let closing = current.withLock { state -> Bool in
            state.response = response
            return state.closing
        }
        if closing { response.close() }
        guard response.head.status.code == 200 else {
            response.close()
            throw GatewayClientError.transport("the gateway refused an emulated WebSocket's downstream with \(response.head.status.code)")
        }
        return response
    }

    /// Reads downstream responses, `first` (from ``next()``) and those after it, until the gateway closes the WebSocket
    /// (`true`) or the client's close was not answered in time (`false`); each message goes to `deliver`. A broken or
    /// malformed downstream throws.
    func read(_ first: OneShotHTTPRequest.StreamedResponse, _ deliver: (GatewayWebSocketMessage) -> Void) async throws -> Bool {
        defer { current.withLock { $0.timer?.cancel() } }
        var reader = KaazingEmulation.FrameReader(maximumLength: configuration.maxMessageSize)
        var pending: OneShotHTTPRequest.StreamedResponse? = first
        while true {
            let response: OneShotHTTPRequest.StreamedResponse
            if let taken = pending {
                response = taken
                pending = nil
            } else {
                response = try await next()
            }
            var reconnect = false
            var closed = false
            do {
                for try await bytes in response.body {
                    reader.append(bytes.readableBytesView)
                    for frame in try reader.frames() {
                        switch frame {
                        case .binary(let payload):
                            deliver(.binary(bytes: payload))
                        case .text(let payload):
                            guard let text = String(utf8Validating: payload) else {
                                throw GatewayClientError.transport("a text message that is not UTF-8 on an emulated WebSocket")
                            }
                            deliver(.text(text))
                        case .command(.close):
                            closed = true
                        case .command(.reconnect):
                            reconnect = true
                        case .ping, .pong, .command(.nop):
                            break  // never asked for (no `X-Accept-Commands`), or a heartbeat
                        }
                    }
                }
            } catch let error as KaazingEmulation.FormatError {
                response.close()
                throw GatewayClientError.transport("an emulated WebSocket's downstream is not frames: \(error.description)")
            } catch {
                response.close()
                // The client's own close, unanswered in time, ends the reading without an error.
                if current.withLock({ $0.closing }) { return false }
                throw error
            }
            response.close()
            if closed { return true }
            guard reconnect else {
                if current.withLock({ $0.closing }) { return false }
                throw GatewayClientError.transport("an emulated WebSocket's downstream ended without RECONNECT")
            }
        }
    }

    /// The client closed: the downstream is left after `delay` unless the gateway ended it first.
    func closeSoon(after delay: Duration) {
        let timer = Task { [self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            current.withLock { $0.closing = true; return $0.response }?.close()
        }
        current.withLock { $0.timer = timer }
    }
}
