import AsyncHTTPClient
import Foundation
public import GatehouseClient
import GatehouseProtocol
import HTTPTypes
public import HummingbirdWSClient
public import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Opens a WebSocket through a Gatehouse gateway, answering `401` challenges on the handshake (SwiftNIO, for
/// Linux servers and tools; on Apple platforms `URLSessionGatewayWebSocket` of `GatehouseClient` does the same
/// over `URLSessionWebSocketTask`).
///
/// The challenge is read from a handshake sent without credentials (not counted by the gateway as a try). Each
/// answer is first checked with an `OPTIONS` carrying `Max-Forwards: 0`, which the gateway answers itself without
/// reaching the upstream (``check(url:authorization:)``): a wrong answer (`401`) is asked again, a refusal such as
/// `403` (a user without the service's role) ends with `GatewayClientError.refused(status:challenge:)` — the
/// handshake's own refusal carries no status the WebSocket client can read. `answer` gets the `WWW-Authenticate`
/// value and returns the `Authorization` value, or throws to give up (e.g. the SDK's `GatewayChallengeLoop` at
/// its retry limit).
public enum GatewayWebSocketClient {
    static let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// The `http`/`https` URL a WebSocket URL's handshake goes to.
    static func httpURL(of url: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw GatewayClientError.transport("\(url) is not a WebSocket URL") }
        components.scheme = components.scheme == "wss" ? "https" : "http"
        guard let httpURL = components.string else { throw GatewayClientError.transport("\(url) is not a WebSocket URL") }
        return httpURL
    }

    /// Whether the answers to `challenge` are good for one request only: `Negotiate` and `Application Negotiate`.
    static func isSingleUse(_ challenge: String) -> Bool {
        let scheme = challenge.lowercased()
        return scheme.hasPrefix("negotiate") || scheme.hasPrefix("application negotiate")
    }

    /// Asks the gateway whether `authorization` is admitted to `url`'s service: an `OPTIONS` with `Max-Forwards: 0`,
    /// which a Gatehouse gateway answers itself (`200` when admitted, or its `401`/`403`) and never forwards.
    /// Returns the status, the `WWW-Authenticate` value and the `error` of a JSON body (the gateway's refusals say
    /// `unauthorized` or `forbidden`; an upstream's answer, through a gateway that forwards the request, does not).
    public static func check(url: String, authorization: String) async throws -> (status: Int, challenge: String?, error: String?, admitted: Bool) {
        let httpURL = try httpURL(of: url)
        var request = HTTPClientRequest(url: httpURL)
        request.method = .OPTIONS
        request.headers.add(name: "Max-Forwards", value: "0")
        request.headers.add(name: "Authorization", value: authorization)
        // Not kept for the next handshake probe: the gateway upgrades only a connection's first request.
        request.headers.add(name: "Connection", value: "close")
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try? await response.body.collect(upTo: 1 << 16)
        let error = body.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.readableBytesView)) }?["error"]
        // The gateway's own admission: its Allow and no body (not a 200 from something in front of it that answers
        // OPTIONS itself).
        let admitted = response.status.code == 200 && response.headers.first(name: "Allow") == GatewayAdmissionCheck.allow
            && (body?.readableBytes ?? 0) == 0
        return (Int(response.status.code), response.headers.first(name: "WWW-Authenticate"), error, admitted)
    }

    /// Sends an upgrade request with `authorization` and returns the status and `WWW-Authenticate` of a refusal
    /// (`101` when the gateway would upgrade: the connection is then dropped at once).
    public static func probe(url: String, authorization: String? = nil) async throws -> (status: Int, challenge: String?) {
        let httpURL = try httpURL(of: url)
        var request = HTTPClientRequest(url: httpURL)
        request.headers.add(name: "Connection", value: "Upgrade")
        request.headers.add(name: "Upgrade", value: "websocket")
        request.headers.add(name: "Sec-WebSocket-Version", value: "13")
        request.headers.add(name: "Sec-WebSocket-Key", value: Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        let response = try await http.execute(request, timeout: .seconds(30))
        _ = try? await response.body.collect(upTo: 1 << 16)
        return (Int(response.status.code), response.headers.first(name: "WWW-Authenticate"))
    }

    /// Connects to `url`, answering challenges with `answer`, then runs `handler` until the connection closes;
    /// returns the close frame the gateway sent, if any. Every frame reaches `handler` as data, in-band challenges
    /// included: only ``connectRevalidating(url:challengeHandler:maxAttempts:logger:handler:)`` answers those.
    @discardableResult
    public static func connect(
        url: String, logger: Logger = Logger(label: "gateway-websocket-client"),
        answer: @escaping @Sendable (_ challenge: String) async throws -> String,
        handler: @escaping WebSocketDataHandler<WebSocketClient.Context>
    ) async throws -> WebSocketCloseFrame? {
        while true {
            let (status, challenge) = try await probe(url: url)
            var headers = HTTPFields()
            var admitted = false
            if status == 401, let challenge {
                let authorization = try await answer(challenge)
                // Checked before the handshake, whose refusal cannot be read: a wrong answer is asked again (the
                // answers' retry limit ends that), any other refusal is final; counted once by the gateway either way.
                // Not a Kerberos token: it is good for one request only (the acceptor's replay cache refuses it again).
                // Only the gateway's own refusals count: through a gateway that forwards the OPTIONS, the upstream
                // answers it, and the handshake decides.
                if !Self.isSingleUse(challenge) {
                    let (checked, refusal, error, gatewayAdmitted) = try await check(url: url, authorization: authorization)
                    if checked == 401, refusal == challenge { continue }
                    if checked == 403, error == "forbidden" { throw GatewayClientError.refused(status: checked, challenge: refusal) }
                    admitted = gatewayAdmitted
                }
                headers[.authorization] = authorization
            } else if status != 101 && status != 200 {
                throw GatewayClientError.refused(status: status, challenge: challenge)
            }
            do {
                return try await WebSocketClient.connect(url: url, configuration: .init(additionalHeaders: headers), logger: logger, handler: handler)
            } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
                guard headers[.authorization] != nil else { throw GatewayClientError.refused(status: status, challenge: challenge) }
                // The gateway had admitted these credentials: asking for them again would not help (the upstream's
                // WebSocket, say, is down).
                if admitted { throw GatewayClientError.transport("the WebSocket handshake with \(url) failed after the gateway admitted the credentials") }
                continue  // refused: read the challenge again and answer it (the caller's retry limit ends this)
            }
        }
    }

    /// Connects to `url`, answering the handshake's challenges with the SDK's `challengeHandler` (a
    /// `BasicChallengeHandler`, a `TokenChallengeHandler`, a `DispatchChallengeHandler`, ...), giving up with
    /// `GatewayClientError.retryLimitReached` after `maxAttempts` refused answers.
    @discardableResult
    public static func connect(
        url: String, challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2,
        logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: @escaping WebSocketDataHandler<WebSocketClient.Context>
    ) async throws -> WebSocketCloseFrame? {
        let answers = try WebSocketChallengeAnswers(challengeHandler, url: url, maxAttempts: maxAttempts)
        return try await connect(url: url, logger: logger, answer: answers.answer, handler: handler)
    }

    /// Connects like ``connect(url:challengeHandler:maxAttempts:logger:handler:)`` and also answers the gateway's
    /// in-band challenges (a realm with `revalidate: true`) with the same `challengeHandler`, so that the
    /// connection outlives its credentials. `handler` gets the application's messages only.
    ///
    /// The handshake is KAAZING's extended one (``connectInBand(url:challengeHandler:protocols:maxAttempts:handshakeTimeout:logger:handler:)``):
    /// the first challenge and the later ones all come inside the WebSocket. Only a challenge equal to the one its
    /// handshake answered is answered in band: a connection that was not challenged, or a challenge for another
    /// realm, is never answered (the frame is dropped and a warning logged). When the handler gives up on an in-band
    /// challenge (returns `nil`), nothing is sent and the gateway closes the connection after its grace period.
    @discardableResult
    public static func connectRevalidating(
        url: String, challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2,
        logger: Logger = Logger(label: "gateway-websocket-client"),
        handler: @escaping @Sendable (_ messages: AsyncThrowingStream<WebSocketMessage, any Error>, _ outbound: WebSocketOutboundWriter) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        try await connectInBand(url: url, challengeHandler: challengeHandler, maxAttempts: maxAttempts, logger: logger) { messages, outbound, _ in
            try await handler(messages, outbound)
        }
    }
}
