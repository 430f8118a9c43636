import NIOSSL
import GatehouseHTTP
import GatehouseProtocol
import GatehouseChecks
import Foundation
import GatehouseResourceServer
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// The requests Hummingbird serves for the gateway: those of connections handed over by ``GatewayHTTPHandler`` (a
/// first request asking for an upgrade it does not bridge), answered through ``HTTPProxy``, and the WebSocket
/// upgrades Hummingbird's upgrader checks.
extension Gateway {
    /// Methods never relayed (`405`): `TRACE`/`TRACK` would echo the request's credentials back (cross-site
    /// tracing), `CONNECT` would ask the gateway for a tunnel.
    static let refusedMethods: Set<String> = ["TRACE", "TRACK", "CONNECT"]
    /// The methods the gateway relays: its `Allow` (a refused method's `405`, an `OPTIONS` answered by the gateway).
    static let relayedMethods = GatewayAdmissionCheck.allow

    /// Every plain HTTP request (and refused upgrades); `service` is set to the name of the service it went to.
    func respond(to request: Request, context: GatewayRequestContext, service serviceName: inout String) async throws -> Response {
        let target: RequestTarget
        switch self.target(of: request) {
        case .success(let parsed): target = parsed
        case .failure(let error): return GatewayAnswer.refused(error).response
        }
        // The gateway's own probes for load balancers (before any service: a service at `/` cannot hide them).
        if request.method == .get, target.segments.count == 1, target.segments[0] == "health" || target.segments[0] == "ready" {
            return GatewayAnswer.probe(target.segments[0] == "health" ? "ok" : "ready").response
        }
        if request.method == .get, target.segments == ["metrics"] {
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: statistics.exposition())))
        }
        guard let (service, rest) = route(target) else {
            return GatewayAnswer.notFound.response
        }
        serviceName = service.name
        if Self.refusedMethods.contains(request.method.rawValue) {
            var answer = GatewayAnswer.invalidRequest("the gateway does not relay \(request.method.rawValue)", status: 405)
            answer.headers[.allow] = Self.relayedMethods
            return answer.response
        }
        switch await admit(request, query: target.query, to: service, peer: context.channel.remoteAddress?.ipAddress) {
        case .answer(let answer):
            return answer.response
        case .allow(let subject):
            let url = service.upstreamURL(remainder: rest, query: Self.forwardedQuery(target, service: service))
            var response = try await proxy.forward(request, to: url, subject: subject, realm: service.realm,
                                                   forwarding: forwarding(request, context: context),
                                                   onUpstreamError: { [self] in upstreamFailed(service: service.name, protocol: "http", error: nil) })
            // Negotiate's mutual authentication (RFC 4559 §5): the acceptor's token with the successful answer.
            if let challenge = subject?.successChallenge { response.headers[.wwwAuthenticate] = challenge }
            return response
        }
    }

    /// Checks an upgrade request: accepted ones get their relay ready; refused ones leave their answer.
    func shouldUpgrade(_ request: Request, context: GatewayRequestContext) async -> RouterShouldUpgrade {
        let target: RequestTarget
        switch self.target(of: request) {
        case .success(let parsed): target = parsed
        case .failure(let error):
            refusedUpgrades.record(GatewayAnswer.refused(error), for: context.channel)
            return .dontUpgrade
        }
        guard let (service, rest) = route(target), service.webSocket else { return .dontUpgrade }
        switch await admit(request, query: target.query, to: service, peer: context.channel.remoteAddress?.ipAddress) {
        case .answer(let answer):
            refusedUpgrades.record(answer, for: context.channel)
            return .dontUpgrade
        case .allow(let subject):
            let relay = webSocketRelay(service: service, remainder: rest, target: target, subject: subject,
                                       forwarding: forwarding(request, context: context))
            acceptedUpgrades.withLock { $0[context.connection] = relay }
            var upgradeHeaders = HTTPFields()
            if let challenge = subject?.successChallenge { upgradeHeaders[.wwwAuthenticate] = challenge }
            return .upgrade(upgradeHeaders)
        }
    }
}
