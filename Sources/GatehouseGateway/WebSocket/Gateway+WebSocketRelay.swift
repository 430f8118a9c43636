import NIOSSL
import GatehouseHTTP
import GatehouseProtocol
import GatehouseChecks
import Foundation
import GatehouseResourceServer
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// What an accepted WebSocket upgrade is relayed with (a ``WebSocketBridge`` on the connection's event loop):
/// the upstream request, its deadline and its in-band revalidation.
extension Gateway {
    /// The bridge of an admitted WebSocket — a plain upgrade, KAAZING's extended handshake or an emulated create: the
    /// one place a bridge is built. `route` is the WebSocket's own (service, remainder, target), `protocols` the
    /// sub-protocols asked of the upstream, `extensions` KAAZING's negotiated with the client, `opening` what the
    /// client is sent once the upstream accepted.
    func webSocketBridge(
        route: GatewayRoute, subject: Subject?, forwarding: ForwardingHeaders, protocols: [String] = [],
        eventLoop: any EventLoop, extensions: KaazingExtensionsNegotiation = .none, opening: ((String?) -> [WebSocketFrame])? = nil
    ) -> WebSocketBridge {
        let service = route.service
        let relay = webSocketRelay(service: service, remainder: route.remainder, target: route.target, subject: subject, forwarding: forwarding)
        let upstream = WebSocketBridge.Upstream(key: service.upstreamKey, target: route.upstreamTarget, authority: service.base.authority,
                                                protocols: protocols.isEmpty ? nil : protocols.joined(separator: ", "))
        return WebSocketBridge(relay: relay, upstream: upstream, statistics: statistics, openWebSockets: openWebSockets, tls: upstreamPools,
                               eventLoop: eventLoop, extensions: extensions, opening: opening)
    }

    /// The relay of an accepted WebSocket upgrade for `service`: the upstream URL, the fields it gets (forwarding,
    /// `X-Gateway-User`), the connection's deadline and, when the realm revalidates, how an in-band answer is checked.
    func webSocketRelay(service: ProtectedService, remainder rest: ProtectedService.Remainder, target: RequestTarget, subject: Subject?,
                        forwarding: ForwardingHeaders) -> WebSocketRelay {
        let realm = service.realm
        let sessionEnd = realm?.sessionTimeout.map { ContinuousClock.now.advanced(by: $0) }
        let deadline = Self.connectionDeadline(subject: subject, realm: realm, sessionEnd: sessionEnd)
        var revalidation: WebSocketRelay.Revalidation?
        if let realm, realm.revalidate {
            let roles = service.requiredRoles
            revalidation = WebSocketRelay.Revalidation(challenge: realm.challenge, grace: realm.revalidationGrace, check: { [statistics] authorization in
                let (scheme, value) = Credentials.parseAuthorization(authorization)
                let credentials = Credentials(scheme: scheme, value: value)
                let decision = await realm.decide(credentials, requiredRoles: roles)
                statistics.record(realm: realm.name, credentials: credentials, decision: decision)
                guard case .allow(let subject) = decision else { return nil }
                return subject
            }, deadline: { subject in Self.connectionDeadline(subject: subject, realm: realm, sessionEnd: sessionEnd) },
            user: subject?.name)
        }
        var headers = HTTPFields()
        for (name, value) in forwarding.fields {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        if let name = subject?.name, let field = HTTPField.Name(GatewayRequestPolicy.userHeader) { headers[field] = name }
        let realmName = service.realm?.name ?? ""
        return WebSocketRelay(
            upstreamURL: service.upstreamURL(remainder: rest, query: Self.forwardedQuery(target, service: service), webSocket: true),
            extraHeaders: headers, maxMessageSize: maxMessageSize, deadline: deadline, revalidation: revalidation,
            onExpiry: { [statistics] in statistics.recordExpiry(realm: realmName) },
            onUpstreamError: { [self] error in
                upstreamFailed(service: service.name, protocol: "websocket", error: error, answered: "a WebSocket closed 1011")
            },
            serviceName: service.name, logger: logger)
    }

    /// When a WebSocket of `subject` must authenticate again: the earliest of its credentials' expiry, the realm's
    /// authorization timeout from now, and the end of its session.
    static func connectionDeadline(subject: Subject?, realm: Realm?, sessionEnd: ContinuousClock.Instant?) -> WebSocketRelay.Deadline? {
        var deadline: WebSocketRelay.Deadline?
        func tighten(_ instant: ContinuousClock.Instant, _ reason: String) {
            if let current = deadline, current.instant <= instant { return }
            deadline = .init(instant: instant, reason: reason)
        }
        if let expiry = subject?.expiresAt {
            tighten(ContinuousClock.now.advanced(by: .milliseconds(Int64(max(0, expiry.timeIntervalSinceNow) * 1000))), "credentials expired")
        }
        if let timeout = realm?.authorizationTimeout { tighten(ContinuousClock.now.advanced(by: timeout), "authorization timeout") }
        if let sessionEnd { tighten(sessionEnd, "session timeout") }
        return deadline
    }
}
