public import NIOSSL
import GatehouseHTTP
import GatehouseProtocol
import GatehouseChecks
import Foundation
import GatehouseResourceServer
import HTTPTypes
public import Logging
import NIOCore
import Synchronization

/// The gateway: protected HTTP and WebSocket services behind realms (challenge schemes and login-module
/// chains), proxied to their upstreams.
///
/// ```swift
/// let gateway = try Gateway(configuration: .load(path: "gateway.yaml"))
/// try await gateway.makeServer().run()
/// ```
public final class Gateway: Sendable {
    public let services: [ProtectedService]
    public let statistics = GatewayStatistics()
    let host: String
    let port: Int
    let maxMessageSize: Int
    /// Peers whose forwarding fields are kept.
    let trustedProxies: TrustedProxies
    /// How long a new connection has for its first request head.
    let headerReadTimeout: Duration
    /// How long a keep-alive connection may sit idle or stall.
    let idleTimeout: Duration
    let logger: Logger
    /// Warnings about unreachable upstreams, one per service every 10 s.
    let upstreamWarnings = WarningThrottle(interval: .seconds(10))
    /// TLS for clients (`https`, `wss`); `nil` serves plain HTTP. `ReloadableTLS/reload()` (SIGHUP) changes
    /// the certificate for new connections.
    public let tls: ReloadableTLS?
    /// Whether TLS handshakes ask for a client certificate (optional), for certificate-bound tokens (RFC 8705).
    public let clientCertificates: Bool
    /// Keep-alive connections to the upstreams, one pool per event loop (``GatewayHTTPHandler``).
    let upstreamPools: UpstreamPools
    /// The WebSockets relayed now (closed with 1001 on graceful shutdown).
    let openWebSockets = OpenWebSockets()
    /// KAAZING's emulated WebSockets open now, by id.
    let emulatedWebSockets = EmulatedWebSockets()
    /// KAAZING's bridge page (`/?.kr=xs`), for the origins the WebSocket services allow.
    let kaazingBridgePage: GatewayAnswer
    /// Traces of relayed HTTP exchanges (a server span, its admission and its upstream exchange); `nil`: none.
    public let tracer: OTLPTracer?

    /// A gateway of `services`, built in Swift.
    ///
    /// - Parameters:
    ///   - services: the protected services; a request goes to the one with the longest path that holds its target.
    ///   - host: the address to listen on.
    ///   - port: the port to listen on; 0 picks a free one.
    ///   - maxWebSocketMessageSize: the largest WebSocket message relayed, in bytes.
    ///   - trustedProxies: peers whose `X-Forwarded-*` and `Forwarded` fields are kept (see `TrustedProxies`).
    ///   - headerReadTimeout: how long a new connection has to send its first complete request head.
    ///   - idleTimeout: how long a keep-alive connection may sit idle between requests, or stall in a later one.
    ///   - upstreamReadTimeout: how long an upstream may stay silent while an answer is awaited or streamed.
    ///   - tls: TLS for clients (`https`, `wss`); `nil` serves plain HTTP.
    ///   - upstreamTLS: trust for `https`/`wss` upstreams (a CA file's; its name is no longer used); `nil`: the system's
    ///     roots. Never verification off: it is the upstream pools' (`UpstreamConnectionPool`).
    ///   - clientCertificates: whether TLS handshakes ask for a client certificate (optional), for certificate-bound tokens.
    ///   - tracer: traces of relayed exchanges; `nil`: none.
    ///   - logger: the gateway's log.
    public init(services: [ProtectedService], host: String = "127.0.0.1", port: Int = 0, maxWebSocketMessageSize: Int = 1 << 20,
                trustedProxies: TrustedProxies = .none,
                headerReadTimeout: Duration = .seconds(GatewayConfiguration.defaultHeaderReadTimeout),
                idleTimeout: Duration = .seconds(GatewayConfiguration.defaultIdleTimeout),
                upstreamReadTimeout: Duration = .seconds(GatewayConfiguration.defaultUpstreamReadTimeout),
                tls: ReloadableTLS? = nil, upstreamTLS: (configuration: TLSConfiguration, name: String)? = nil,
                clientCertificates: Bool = false, tracer: OTLPTracer? = nil, logger: Logger = Logger(label: "gatehouse-gateway")) {
        // The longest prefix first: the most specific service (and realm) wins.
        self.services = services.sorted { $0.segments.count > $1.segments.count }
        let webSocketServices = services.filter(\.webSocket)
        // Only the origins services name: a service that leaves allowedOrigins unset lets any page open its WebSockets
        // directly, but lends no other origin the bridge (which reads its answers for the page: issue 54, finding 5).
        kaazingBridgePage = KaazingBridgePage.answer(
            allowedOrigins: webSocketServices.reduce(into: Set<String>()) { $0.formUnion($1.allowedOrigins ?? []) })
        self.host = host
        self.port = port
        self.maxMessageSize = maxWebSocketMessageSize
        self.trustedProxies = trustedProxies
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.tls = tls
        upstreamPools = UpstreamPools(tls: upstreamTLS?.configuration, readTimeout: TimeAmount(upstreamReadTimeout))
        self.tracer = tracer
        self.clientCertificates = clientCertificates && tls != nil
        self.logger = logger
    }

    // MARK: Routing and authorization

    /// The service for a normalised target, with the rest of its path.
    func route(_ target: RequestTarget) -> (ProtectedService, ProtectedService.Remainder)? {
        for service in services {
            if let rest = service.remainder(of: target) { return (service, rest) }
        }
        return nil
    }

    enum Admission: Sendable {
        case allow(Subject?)
        case answer(GatewayAnswer)
    }

    /// A remembered admission used again: counted as a success with credentials, as the chain's would be.
    func readmit(_ remembered: RememberedAdmission) -> Admission {
        remembered.tally?.countReadmission()
        return .allow(remembered.subject)
    }

    /// A realm's decision counted, logged and turned into an admission.
    func admission(_ decision: Realm.Decision, realm: Realm, credentials: Credentials) -> Admission {
        statistics.record(realm: realm.name, credentials: credentials, decision: decision)
        switch decision {
        case .allow(let subject):
            return .allow(subject)
        case .challenge(let reason):
            logger.debug("challenge", metadata: ["realm": .string(realm.name), "reason": .string(reason)])
            return .answer(realm.challengeAnswer())
        case .forbidden(let subject):
            logger.debug("forbidden", metadata: ["realm": .string(realm.name), "user": .string(subject.name ?? "-")])
            return .answer(Realm.forbiddenAnswer())
        case .unavailable(let reason):
            logger.debug("unavailable", metadata: ["realm": .string(realm.name), "reason": .string(reason)])
            return .answer(GatewayAnswer.unavailable(reason))
        case .throttled(let reason, let retryAfter):
            logger.debug("throttled", metadata: ["realm": .string(realm.name), "reason": .string(reason)])
            return .answer(GatewayAnswer.throttled(reason, retryAfter: retryAfter))
        }
    }

    /// The query forwarded upstream: the checked query without the realm's credential parameters.
    static func forwardedQuery(_ target: RequestTarget, service: ProtectedService) -> String? {
        CredentialCarriers.query(target.query, removing: Set(service.realm?.queryParameters ?? []))
    }

}

extension Gateway {
    /// Tells the operator that an upstream failed a request (`502`, or an answer cut off): a warning naming the
    /// service and the error, at most one per service every 10 s with how many like it were left out.
    func warnUpstreamFailure(service: String, error: String?, answered: String = "answered 502") {
        guard let suppressed = upstreamWarnings.allow(service) else { return }
        var metadata: Logger.Metadata = ["service": .string(service), "alike_left_out": .stringConvertible(suppressed)]
        if let error { metadata["error"] = .string(error) }
        logger.warning("upstream unavailable: \(answered)", metadata: metadata)
    }

    /// An upstream failed a request of `service`: counted (`gatehouse_gateway_upstream_errors_total`) and told to the
    /// operator (``warnUpstreamFailure(service:error:answered:)``).
    func upstreamFailed(service: String, protocol kind: String, error: String?, answered: String = "answered 502") {
        statistics.upstreamError(service: service, protocol: kind)
        warnUpstreamFailure(service: service, error: error, answered: answered)
    }
}
