import NIOSSL
import GatehouseHTTP
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

/// The gateway: protected HTTP and WebSocket services behind realms (challenge schemes and login-module
/// chains), proxied to their upstreams.
///
/// ```swift
/// let gateway = try Gateway(configuration: .load(path: "gateway.yaml"))
/// try await gateway.makeApplication().runService()
/// ```
public final class Gateway: Sendable {
    public let services: [Service]
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
    /// TLS for clients (`https`, `wss`); `nil` serves plain HTTP. ``ReloadableTLS/reload()`` (SIGHUP) changes
    /// the certificate for new connections.
    public let tls: ReloadableTLS?
    /// Trust for `https`/`wss` upstreams: the system's roots, or a configured CA file's. Never verification off.
    let upstreamTLS: TLSConfiguration?
    let proxy: HTTPProxy
    /// Answers decided while checking a refused upgrade, written in place of the upgrader's `400`.
    let refusedUpgrades = RefusedUpgradeAnswers()
    /// Upgrades accepted, waiting for their WebSocket handler.
    let acceptedUpgrades = Mutex<[ObjectIdentifier: WebSocketRelay]>([:])

    /// A gateway of `services`, built in Swift.
    ///
    /// - Parameters:
    ///   - trustedProxies: peers whose `X-Forwarded-*` and `Forwarded` fields are kept (see ``TrustedProxies``).
    ///   - headerReadTimeout: how long a new connection has to send its first complete request head.
    ///   - idleTimeout: how long a keep-alive connection may sit idle between requests, or stall in a later one.
    public init(services: [Service], host: String = "127.0.0.1", port: Int = 0, maxWebSocketMessageSize: Int = 1 << 20,
                trustedProxies: TrustedProxies = .none,
                headerReadTimeout: Duration = .seconds(GatewayConfiguration.defaultHeaderReadTimeout),
                idleTimeout: Duration = .seconds(GatewayConfiguration.defaultIdleTimeout),
                tls: ReloadableTLS? = nil, upstreamTLS: (configuration: TLSConfiguration, name: String)? = nil,
                logger: Logger = Logger(label: "gatehouse-gateway")) {
        // The longest prefix first: the most specific service (and realm) wins.
        self.services = services.sorted { $0.segments.count > $1.segments.count }
        self.host = host
        self.port = port
        self.maxMessageSize = maxWebSocketMessageSize
        self.trustedProxies = trustedProxies
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.tls = tls
        self.upstreamTLS = upstreamTLS?.configuration
        proxy = HTTPProxy(timeout: .seconds(120), upstreamTLS: upstreamTLS)
        self.logger = logger
    }

    /// A gateway from a configuration; `customModules` are the login modules that `type:` names besides
    /// `users` and `gatehouse-token`.
    public convenience init(configuration: GatewayConfiguration, customModules: [String: any LoginModule] = [:],
                            logger: Logger = Logger(label: "gatehouse-gateway")) throws {
        let lockoutPolicy: AccountLockoutPolicy
        do {
            lockoutPolicy = try (configuration.accountLockout ?? AccountLockoutSettings()).policy()
        } catch {
            throw GatewayConfigurationError("accountLockout.\(error.key) \(error.problem)")
        }
        let lockouts = InMemoryAccountLockouts(policy: lockoutPolicy)
        var realms: [String: Realm] = [:]
        for realm in configuration.realms {
            var entries: [LoginChain.Entry] = []
            for module in realm.loginModules {
                entries.append(.init(try Self.makeModule(module, custom: customModules, lockouts: lockouts), flag: module.flag))
            }
            guard !entries.isEmpty else { throw GatewayConfigurationError("realm \(realm.name) has no login module") }
            realms[realm.name] = Realm(
                name: realm.name, description: realm.description, scheme: realm.scheme, headers: realm.headers ?? [],
                queryParameters: realm.queryParameters ?? [], cookies: realm.cookies ?? [],
                authorizationTimeout: realm.authorizationTimeout.map { .milliseconds(Int64($0 * 1000)) },
                sessionTimeout: realm.sessionTimeout.map { .milliseconds(Int64($0 * 1000)) },
                revalidate: realm.revalidate ?? false, revalidationGrace: .milliseconds(Int64((realm.revalidationGrace ?? 30) * 1000)),
                chain: LoginChain(entries))
        }
        let services = try configuration.services.map { service in
            guard let upstream = URL(string: service.upstream), upstream.host != nil else {
                throw GatewayConfigurationError("service \(service.name): upstream \(service.upstream) is not a URL")
            }
            var realm: Realm?
            if let name = service.realm {
                guard let found = realms[name] else { throw GatewayConfigurationError("service \(service.name): no realm \(name)") }
                realm = found
            }
            let roles = service.requireRoles ?? []
            if roles.contains("*"), roles.count > 1 {
                throw GatewayConfigurationError("service \(service.name): conflicting roles, remove the wildcard")
            }
            return try Service(name: service.name, path: service.path, upstream: upstream, realm: realm, requiredRoles: roles,
                               webSocket: service.webSocket ?? false)
        }
        func timeout(_ seconds: Double?, _ fallback: Double, _ name: String) throws -> Duration {
            let value = seconds ?? fallback
            guard value > 0, value <= 86_400 else { throw GatewayConfigurationError("\(name) must be between 0 and 86400 seconds") }
            return .milliseconds(Int64(value * 1000))
        }
        self.init(services: services, host: configuration.host, port: configuration.port,
                  maxWebSocketMessageSize: configuration.maxWebSocketMessageSize ?? 1 << 20,
                  trustedProxies: try TrustedProxies(configuration.trustedProxies ?? []),
                  headerReadTimeout: try timeout(configuration.headerReadTimeout, GatewayConfiguration.defaultHeaderReadTimeout, "headerReadTimeout"),
                  idleTimeout: try timeout(configuration.idleTimeout, GatewayConfiguration.defaultIdleTimeout, "idleTimeout"),
                  tls: try configuration.tls.map { try ReloadableTLS(certificatePath: $0.certificate, keyPath: $0.key) },
                  upstreamTLS: try configuration.upstreamCAFile.map { (try Self.upstreamTLS(caFile: $0), $0) },
                  logger: logger)
    }

    /// Client TLS for upstreams trusting the CA certificates (PEM) in `caFile`, with full verification.
    static func upstreamTLS(caFile: String) throws -> TLSConfiguration {
        let roots: [NIOSSLCertificate]
        do {
            roots = try NIOSSLCertificate.fromPEMFile(caFile)
        } catch {
            throw GatewayConfigurationError("upstreamCAFile \(caFile): not a readable PEM certificate file")
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(roots)
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        return configuration
    }

    static func makeModule(_ module: LoginModuleConfiguration, custom: [String: any LoginModule],
                           lockouts: any AccountLockouts) throws -> any LoginModule {
        switch module.type {
        case "users":
            var users = module.users ?? []
            if let file = module.usersFile {
                users += try YAMLUsers.load(path: file)
            }
            return UsersLoginModule(users: users, lockouts: lockouts)
        case "gatehouse-token":
            if let introspection = module.introspection {
                return GatehouseTokenLoginModule(
                    verifier: IntrospectionTokenVerifier(serverURL: introspection.serverURL, clientID: introspection.clientID, secret: introspection.secret),
                    requiredScope: module.requiredScope)
            }
            guard let jwks = module.jwksURL else { throw GatewayConfigurationError("gatehouse-token module needs jwksURL or introspection") }
            return GatehouseTokenLoginModule(verifier: LocalTokenVerifier(jwksURL: jwks), requiredScope: module.requiredScope)
        case "kerberos5":
            do {
                return try NegotiateLoginModule(keytab: module.keytab, servicePrincipal: module.servicePrincipal,
                                                principalRoles: module.principalRoles ?? [:])
            } catch {
                throw GatewayConfigurationError("kerberos5 module: \(error)")
            }
        default:
            guard let found = custom[module.type] else { throw GatewayConfigurationError("unknown login module type \(module.type)") }
            return found
        }
    }

    // MARK: Routing and authorization

    /// The service for a normalised target, with the rest of its path.
    func route(_ target: RequestTarget) -> (Service, Service.Remainder)? {
        for service in services {
            if let rest = service.remainder(of: target) { return (service, rest) }
        }
        return nil
    }

    enum Admission: Sendable {
        case allow(Subject?)
        case answer(GatewayAnswer)
    }

    /// Challenges a request for `service`; `query` is the target's checked query.
    func admit(_ request: Request, query: String?, to service: Service) async -> Admission {
        guard let realm = service.realm else { return .allow(nil) }
        let credentials = realm.credentials(from: request, query: query)
        let decision = await realm.decide(credentials, requiredRoles: service.requiredRoles)
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
        }
    }

    /// A request's target, checked and normalised (``RequestTarget``), or the `400`/`414` to answer.
    func target(of request: Request) -> Result<RequestTarget, RequestTargetError> {
        do {
            return .success(try RequestTarget(parsing: request.head.path ?? "/"))
        } catch {
            logger.debug("refused a request target", metadata: ["reason": .string(error.description)])
            return .failure(error)
        }
    }

    /// The query forwarded upstream: the checked query without the realm's credential parameters.
    static func forwardedQuery(_ target: RequestTarget, service: Service) -> String? {
        CredentialCarriers.query(target.query, removing: Set(service.realm?.queryParameters ?? []))
    }

    /// The forwarding fields for a request on `context`'s connection.
    func forwarding(_ request: Request, context: GatewayRequestContext) -> ForwardingHeaders {
        ForwardingHeaders(headers: request.headers, host: request.head.authority, peer: context.channel.remoteAddress?.ipAddress,
                          trusted: trustedProxies, proto: tls == nil ? "http" : "https")
    }

    /// Methods never relayed (`405`): `TRACE`/`TRACK` would echo the request's credentials back (cross-site
    /// tracing), `CONNECT` would ask the gateway for a tunnel.
    static let refusedMethods: Set<String> = ["TRACE", "TRACK", "CONNECT"]

    /// Every plain HTTP request (and refused upgrades).
    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        let target: RequestTarget
        switch self.target(of: request) {
        case .success(let parsed): target = parsed
        case .failure(let error): return GatewayAnswer.refused(error).response
        }
        // The gateway's own probes for load balancers (before any service: a service at `/` cannot hide them).
        if request.method == .get, target.segments.count == 1, target.segments[0] == "health" || target.segments[0] == "ready" {
            return GatewayAnswer.probe(target.segments[0] == "health" ? "ok" : "ready").response
        }
        guard let (service, rest) = route(target) else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "404 Not Found\n")))
        }
        if Self.refusedMethods.contains(request.method.rawValue) {
            var answer = GatewayAnswer.invalidRequest("the gateway does not relay \(request.method.rawValue)", status: 405)
            answer.headers[.allow] = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"
            return answer.response
        }
        switch await admit(request, query: target.query, to: service) {
        case .answer(let answer):
            return answer.response
        case .allow(let subject):
            let url = service.upstreamURL(remainder: rest, query: Self.forwardedQuery(target, service: service))
            var response = try await proxy.forward(request, to: url, subject: subject, realm: service.realm,
                                                   forwarding: forwarding(request, context: context))
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
        switch await admit(request, query: target.query, to: service) {
        case .answer(let answer):
            refusedUpgrades.record(answer, for: context.channel)
            return .dontUpgrade
        case .allow(let subject):
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
            for (name, value) in forwarding(request, context: context).fields {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            if let name = subject?.name, let field = HTTPField.Name(HTTPProxy.userHeader) { headers[field] = name }
            let realmName = service.realm?.name ?? ""
            let relay = WebSocketRelay(
                upstreamURL: service.upstreamURL(remainder: rest, query: Self.forwardedQuery(target, service: service), webSocket: true),
                extraHeaders: headers, maxMessageSize: maxMessageSize, upstreamTLS: upstreamTLS, deadline: deadline, revalidation: revalidation,
                onExpiry: { [statistics] in statistics.recordExpiry(realm: realmName) }, logger: logger)
            acceptedUpgrades.withLock { $0[context.connection] = relay }
            var upgradeHeaders = HTTPFields()
            if let challenge = subject?.successChallenge { upgradeHeaders[.wwwAuthenticate] = challenge }
            return .upgrade(upgradeHeaders)
        }
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

    // MARK: Application

    /// The gateway's Hummingbird application (port 0 picks a free one; `onServerRunning` gets the port).
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let webSocketRouter = Router(context: GatewayRequestContext.self)
        let upgrade: @Sendable (Request, GatewayRequestContext) async throws -> RouterShouldUpgrade = { [self] request, context in
            await shouldUpgrade(request, context: context)
        }
        let relay: WebSocketDataHandler<WebSocketRouterContext<GatewayRequestContext>> = { [self] inbound, outbound, context in
            guard let relay = acceptedUpgrades.withLock({ $0.removeValue(forKey: context.requestContext.connection) }) else {
                try await outbound.close(.unexpectedServerError, reason: "no accepted upgrade")
                return
            }
            await relay.run(client: inbound, outbound)
        }
        let refusedUpgrades = self.refusedUpgrades
        webSocketRouter.ws("/", shouldUpgrade: upgrade, onUpgrade: relay)
        webSocketRouter.ws("**", shouldUpgrade: upgrade, onUpgrade: relay)
        let webSocketResponder = webSocketRouter.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [refusedUpgrades.makeHandler(), UpgradeRedirectHandler()],
                         idleTimeout: TimeAmount(idleTimeout), httpDecoderConfiguration: RequestHeadLimits.decoder),
            ws: .init(maxFrameSize: maxMessageSize))
        let headTimeout = TimeAmount(headerReadTimeout)
        // The upgrade channel with the gateway's guards for the first request (Hummingbird's idle timeout and its
        // parse-error answer only start once the first head has been handed to it).
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration(http2: false)) }
        let server = HTTPServerBuilder { responder in
            GatewayChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                headerReadTimeout: headTimeout, sslContext: sslContext)
        }
        return Application(
            responder: GatewayResponder(gateway: self),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "Gatehouse-Gateway"),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// A gateway from `configuration` and its application.
    public static func makeApplication(
        _ configuration: GatewayConfiguration, customModules: [String: any LoginModule] = [:], logger: Logger = Logger(label: "gatehouse-gateway"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> (gateway: Gateway, application: some ApplicationProtocol) {
        let gateway = try Gateway(configuration: configuration, customModules: customModules, logger: logger)
        return (gateway, try gateway.makeApplication(onServerRunning: onServerRunning))
    }
}

/// Sends every request through ``Gateway/respond(to:context:)``.
struct GatewayResponder: HTTPResponder {
    let gateway: Gateway
    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        try await gateway.respond(to: request, context: context)
    }
}
