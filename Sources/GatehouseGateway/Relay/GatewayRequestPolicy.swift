import Foundation
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import NIOCore

/// What the gateway decides about a request before a realm sees it, in one place: its own endpoints (the probes, the
/// metrics, KAAZING's bridge page), a target no service holds, the methods it never relays, and a WebSocket upgrade
/// it cannot accept. ``GatewayHTTPHandler`` asks it for every request it reads — the gateway has one request path —
/// and carries out the answer; what goes upstream of an admitted request is ``UpstreamRequestHead``'s business (the
/// fields dropped, `Max-Forwards`, the forwarding fields).
///
/// Pure: no socket, no state but the gateway's routes; tested alone (`GatewayRequestPolicyTests`).
struct GatewayRequestPolicy: Sendable {
    /// Methods never relayed (`405`): `TRACE`/`TRACK` would echo the request's credentials back (cross-site
    /// tracing), `CONNECT` would ask the gateway for a tunnel.
    static let refusedMethods: Set<String> = ["TRACE", "TRACK", "CONNECT"]
    /// The methods the gateway relays: its `Allow` (a refused method's `405`, an `OPTIONS` answered by the gateway).
    static let relayedMethods = GatewayAdmissionCheck.allow
    /// The field carrying the authenticated user's name upstream (never taken from the client: dropped from its
    /// request first).
    static let userHeader = GatewayUserField.name

    /// Where a request goes.
    enum Decision {
        /// Answered by the gateway itself, before any service.
        case answer(GatewayAnswer)
        /// To `service`, with the rest of the target below the service's path.
        case service(ProtectedService, ProtectedService.Remainder)
    }

    let gateway: Gateway

    /// The gateway's own endpoints — `GET /health`, `GET /ready`, `GET /metrics` for load balancers and scrapers, and
    /// KAAZING's bridge page — come before any service (a service at `/` cannot hide them); then the service whose
    /// path holds `target`, or `404`.
    func route(_ target: RequestTarget, method: ClientRequestHead.Method) -> Decision {
        if method == .get, target.segments.count == 1, target.segments[0] == "health" || target.segments[0] == "ready" {
            return .answer(GatewayAnswer.probe(target.segments[0] == "health" ? "ok" : "ready"))
        }
        if method == .get, target.segments == ["metrics"] {
            return .answer(GatewayAnswer(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                                         body: ByteBuffer(bytes: gateway.statistics.exposition())))
        }
        if KaazingBridgePage.isRequested(target, method: method) { return .answer(gateway.kaazingBridgePage) }
        guard let (service, remainder) = gateway.route(target) else { return .answer(.notFound) }
        return .service(service, remainder)
    }

    /// `405` with `Allow` for a method the gateway never relays (``refusedMethods``), `nil` for any other.
    static func refusal(ofMethod method: String) -> GatewayAnswer? {
        guard refusedMethods.contains(method) else { return nil }
        var refusal = GatewayAnswer.invalidRequest("the gateway does not relay \(method)", status: 405)
        refusal.headers[.allow] = relayedMethods
        return refusal
    }

    /// What a first request asking for `Upgrade: websocket` is.
    enum WebSocketUpgrade: Equatable {
        /// A WebSocket handshake (RFC 6455 §4.2.1) to a WebSocket service, with the client's key.
        case handshake(key: String)
        /// A malformed handshake, wherever it goes: answered with this, and the connection closed (the client may
        /// send frames next).
        case refused(status: Int, description: String)
        /// Not an upgrade the gateway switches to (no `Connection: upgrade`, no service at its target, or a service
        /// without WebSockets): answered as a plain request, its `Upgrade` dropped as every hop-by-hop field is
        /// (RFC 9110 §7.8).
        case plain
    }

    /// Reads a request carrying `Upgrade: websocket` to `service` (`nil`: no service holds its target).
    static func webSocketUpgrade(_ head: ClientRequestHead, to service: ProtectedService?) -> WebSocketUpgrade {
        let upgrades = head.values("upgrade")
        guard upgrades.count == 1, HeaderText.equalsIgnoringCase(upgrades[0], "websocket"), head.connectionTokens.contains("upgrade")
        else { return .plain }
        guard head.method == .get, !head.hasBody else {
            return .refused(status: 400, description: "a WebSocket handshake is a GET request without a body")
        }
        guard head.values("sec-websocket-version") == ["13"] else {
            // RFC 6455 §4.4: `426` with the versions the server speaks, for the client to try again.
            return .refused(status: 426, description: "the gateway speaks WebSocket version 13 only")
        }
        guard let key = head.first("sec-websocket-key"), isValidKey(key) else {
            return .refused(status: 400, description: "a WebSocket handshake needs a Sec-WebSocket-Key of 16 bytes in base64")
        }
        guard let service, service.webSocket else { return .plain }
        return .handshake(key: key)
    }

    /// A `Sec-WebSocket-Key`: 16 bytes in base64 (RFC 6455 §4.1).
    static func isValidKey(_ key: String) -> Bool { key.utf8.count == 24 && Data(base64Encoded: key)?.count == 16 }

    /// The answer of a refused handshake: `426` names the version the gateway speaks.
    static func answer(_ status: Int, _ description: String) -> GatewayAnswer {
        var answer = GatewayAnswer.invalidRequest(description, status: status)
        if status == 426 {
            answer.headers[HTTPField.Name("Sec-WebSocket-Version")!] = "13"
            answer.headers[.upgrade] = "websocket"
        }
        return answer
    }
}
