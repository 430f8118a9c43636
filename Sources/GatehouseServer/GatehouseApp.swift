import GatehouseProtocol
import Foundation
public import GatehouseChecks
import GatehouseHTTP
import NIOCore
import NIOSSL
import ServiceLifecycle
public import GatehouseStore
public import Hummingbird
public import Logging

/// How to run a Gatehouse authorization server.
public struct ServerConfiguration: Sendable {
    /// The address to listen on; loopback by default.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one.
    public var port: Int = 8080
    /// The policy file; `nil` runs the ``DemoPolicy``.
    public var policyPath: String?
    /// Where registrations, client states, keys and the audit log are kept: SQLite (`GatehouseSQLite`) on one
    /// machine, PostgreSQL (`GatehousePostgres`) for several nodes.
    public var store: any GatehouseStore
    /// The check classes the policy may name.
    public var registry: SecurityCheckRegistry = .builtIn
    /// The `iss` of issued tokens and the `issuer` of the RFC 8414 metadata: this server's public base URL
    /// (`https://auth.example.com`). `nil`: `http://<host>:<port>` of the listening address.
    public var issuer: String?
    /// Signing keys older than this that are no longer current stop verifying (`nil`: only retired by command).
    public var signingKeyMaxAge: Duration?
    /// TLS (with HTTP/2 by ALPN); `nil` serves plain HTTP/1.1, for loopback or behind a terminating proxy.
    public var tls: ReloadableTLS?
    /// Whether TLS handshakes ask for a client certificate (optional: clients without one connect as before): for
    /// confidential clients that authenticate by certificate and their certificate-bound tokens (RFC 8705). Any
    /// certificate is accepted at the TLS layer; what it proves is decided per request.
    public var requestClientCertificates = false
    /// The authorities of `tls_client_auth` clients' certificates (implies ``requestClientCertificates``).
    public var clientCertificateAuthorities: ClientCertificateAuthorities?

    /// How long a keep-alive connection may sit idle (or stall) before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a new connection has to send its first complete request head (slowloris), plain HTTP; `408` after.
    public var headerReadTimeout: Duration = .seconds(10)
    /// Whether each request's task runs on its connection's event loop (``EventLoopTaskExecutor``: no thread hop
    /// per request and store call) rather than on Swift concurrency's shared threads. Off only for custom security
    /// checks that block their thread (synchronous I/O), which would stall every connection of that event loop.
    public var connectionTasksOnEventLoop = true
    /// Who may read `/metrics`: anyone who reaches the port (`.open`), or a confidential client's bearer token with
    /// scope `gatehouse.metrics` (or an admin scope: `.token`; Prometheus' `oauth2` client credentials get one).
    /// `nil`: open on a loopback host, a token beyond it.
    public var metricsAccess: MetricsAccess?

    /// Who may read `/metrics`.
    public enum MetricsAccess: String, Sendable, CaseIterable {
        case open, token
    }

    /// ``metricsAccess``, or its default for ``host``: open on loopback, a token beyond.
    public var effectiveMetricsAccess: MetricsAccess { metricsAccess ?? (LoopbackHost.contains(host) ? .open : .token) }

    /// The reverse proxies (addresses, CIDR blocks) whose `Forwarded` / `X-Forwarded-For|Host|Proto` are believed:
    /// the client's address (throttles, audit) and the host its page was served from (the same-origin test) come
    /// from them. Every other peer's are ignored. None by default.
    public var trustedProxies: TrustedProxies = .none

    /// Traces of requests, exported to an OpenTelemetry collector (``OTLPTracer``); `nil` (the default): none. With
    /// a tracer, every request is answered on a task (none from memory on the event loop), so that it has its span.
    public var tracer: OTLPTracer?

    /// This node's name in the audit log (`nil`: the host name).
    public var nodeName: String?
    /// How long audit events are kept, days.
    public var auditRetentionDays: Int = 90
    /// Where every audit event is also written as one JSON line (level info), if anywhere: for a log pipeline.
    public var auditLines: Logger?
    /// How often the store is asked whether an operator applied a newer policy (on any node).
    public var policyPollInterval: Duration = .seconds(2)
    /// How long one store call may take before its request is answered `503` (``GuardedStore``): a frozen or
    /// restarting database never strands a request.
    public var storeDeadline: Duration = .seconds(5)
    /// How long a node answers introspection's device and active user of a client from memory after reading them
    /// (a change made through another node shows this late at most; this node's own changes show at once).
    public var introspectedClientLifetime: Duration = .seconds(2)

    /// The adapters whose resources the server serves under `/mfp/api/adapters/` (the seeds' sample is
    /// ``ResourceAdapter``).
    public var adapters: [any Adapter] = []

    /// The hosted sign-in page's strings and style (`--sign-in-theme`; ``SignInTheme/load(folder:)``).
    public var signInTheme: SignInTheme = .builtIn

    /// A configuration of the server on `store`, with the defaults for everything else.
    public init(store: any GatehouseStore) {
        self.store = store
    }
}

/// Builds the Gatehouse HTTP application.
public enum Gatehouse {
    /// The `Server` field of every answer.
    static let serverName = "Gatehouse"
    /// Gatehouse's version (`gatehouse --version`).
    public static let version = "1.0.0"

    /// Opens the store, reads the policy (stopping with a ``PolicyError`` if it is wrong), loads or creates the
    /// signing keys and returns the application, ready to run.
    ///
    /// - Parameters:
    ///   - onServerRunning: called with the bound port once the server listens.
    ///   - onPolicy: called with the policy the server starts with (its ``PolicyInForce/Snapshot/origin``: a file's
    ///     path, "demo policy", "stored policy version N"), before it listens.
    public static func makeApplication(
        _ configuration: ServerConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onPolicy: @Sendable (_ origin: String) -> Void = { _ in }
    ) async throws -> GatehouseApplication {
        let service = try await makeService(configuration, logger: logger)
        onPolicy(service.policies.current.origin)
        let router = Router(context: GatehouseRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestMetricsMiddleware(metrics: service.metrics))
        router.add(middleware: CORSMiddleware(policies: service.policies))
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: RequestSourceMiddleware(trustedProxies: configuration.trustedProxies))
        if let tracer = configuration.tracer {
            router.add(middleware: RequestTracingMiddleware(tracer: tracer, trustedProxies: configuration.trustedProxies))
        }
        router.get("health") { _, _ in JSONBody.response(.ok, ["status": "ok"]) }
        router.get("ready") { _, _ in await Readiness.check(service) }
        let openAPI = JSONBody.buffer(try OpenAPIDocument.load())
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: openAPI))
        }
        let admin = AdminService(service: service, registry: configuration.registry)
        let metricsAccess = configuration.effectiveMetricsAccess
        router.get("metrics") { request, context in
            if metricsAccess == .token { _ = try await admin.authorizeMetrics(request.headers[.authorization], connection: context) }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(bytes: service.metrics.exposition())))
        }
        let runtime = RuntimeRoutes<GatehouseRequestContext>(service: service)
        runtime.add(to: router)
        AdapterRoutes(adapters: configuration.adapters, validator: service.validator).add(to: router)
        DiscoveryRoutes(signer: service.signer, issuer: service.issuerName, policies: service.policies).add(to: router)
        AdminRoutes(admin: admin).add(to: router)
        ConsoleRoutes().add(to: router)
        OpenIDRoutes<GatehouseRequestContext>(provider: OpenIDProvider(service: service), theme: configuration.signInTheme).add(to: router)
        // Last: runs only for requests no route matched (405 for a routed path's other methods).
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes, headForGet: true))
        if configuration.tls == nil, !ServingWarnings.isLoopback(configuration.host) {
            logger.warning("Serving plain HTTP on \(configuration.host): tokens, PINs and passwords cross the network in clear. Use --tls-certificate/--tls-key, or a TLS-terminating proxy on this machine.")
        }
        let loopAnswers = LoopAnswers(routes: configuration.tracer == nil ? runtime.loopRoutes : [], serverName: Self.serverName,
                                      metrics: service.metrics, trustedProxies: configuration.trustedProxies)
        var front = ServeFront(responder: router.buildResponder(), loopAnswers: loopAnswers,
                               idleTimeout: .nanoseconds(configuration.idleTimeout.wholeNanoseconds),
                               headerReadTimeout: .nanoseconds(configuration.headerReadTimeout.wholeNanoseconds),
                               bodyTimeout: .nanoseconds(configuration.headerReadTimeout.wholeNanoseconds),
                               requestsOnEventLoop: configuration.connectionTasksOnEventLoop,
                               serverName: Self.serverName, maxBody: ServeFront.maxBody, logger: logger)
        if let tls = configuration.tls {
            let clientCertificates = configuration.requestClientCertificates || configuration.clientCertificateAuthorities != nil
            front.tls = (try NIOSSLContext(configuration: tls.serverConfiguration(http2: true, clientCertificates: clientCertificates)),
                         clientCertificates)
        }
        let refused = service.metrics.counter("gatehouse_accept_refused_total")
        let paused = service.metrics.counter("gatehouse_accept_paused_total")
        let connections = front.front
        let listener = FrontListener(host: configuration.host, port: configuration.port, name: "server", logger: logger,
                                     initialize: { connections.initialize($0) }, refused: { refused.increment() }, paused: { paused.increment() },
                                     onServerRunning: { port in
                                         service.issuerName.bind(port: port)
                                         await onServerRunning(port)
                                     })
        let services: [any Service] = [service.policyWatcher, service.audit] + (configuration.tracer.map { [$0.exporter] } ?? []) + [listener]
        return GatehouseApplication(service: ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], logger: logger)))
    }

    /// The authorization service alone, for embedding or benchmarks.
    public static func makeService(_ configuration: ServerConfiguration, logger: Logger) async throws -> AuthorizationService {
        let metrics = GatehouseMetrics()
        let guarded = configuration.store as? GuardedStore ?? GuardedStore(configuration.store, deadline: configuration.storeDeadline)
        let store = MeasuredStore(guarded, metrics: metrics)
        let nodeName = configuration.nodeName ?? ProcessInfo.processInfo.hostName
        // The view of locked accounts may lag the store by a few poll intervals before the store is read instead.
        let knownLockouts = KnownLockouts(maxAge: max(3 * configuration.policyPollInterval.wholeMilliseconds, 5000))
        try await knownLockouts.refresh(from: store, now: EpochTime.nowMillis())
        let compiler = PolicyCompiler(store: store, registry: configuration.registry, node: nodeName, knownLockouts: knownLockouts,
                                      servesBeyondLoopback: !LoopbackHost.contains(configuration.host), logger: logger)
        let policies = PolicyInForce(try await startingPolicy(configuration, compiler: compiler, logger: logger))
        let policy = policies.current.policy
        for warning in policy.warnings { logger.warning("\(warning)") }
        for user in policy.users { try await store.upsertUser(user) }
        let signer = try await TokenSigner.load(from: store, maxKeyAge: configuration.signingKeyMaxAge)
        let revocations = RevocationList(store: store)
        let longestToken = policy.applications.map(\.maxTokenExpiration).max() ?? 3600
        try await revocations.load(since: EpochTime.nowMillis() - Int64(max(longestToken, 3600)) * 1000)
        var service = AuthorizationService(
            policyWatcher: PolicyWatcher(policies: policies, compiler: compiler, interval: configuration.policyPollInterval, logger: logger),
            signer: signer, revocations: revocations,
            issuer: IssuerName(configured: configuration.issuer, host: configuration.host, port: configuration.port),
            audit: AuditLog(store: store, node: nodeName, retentionDays: configuration.auditRetentionDays, logger: logger,
                            lines: configuration.auditLines, dropped: metrics.counter("gatehouse_audit_events_dropped_total")),
            metrics: metrics,
            introspectedClients: IntrospectedClients(lifetime: configuration.introspectedClientLifetime.wholeMilliseconds),
            logger: logger)
        service.clientCertificateAuthorities = configuration.clientCertificateAuthorities
        return service
    }

    /// The policy a node starts with: the newest one operators applied through the admin API, if the store holds
    /// one this node can run, else the policy file (or the demo policy). The file is checked either way, so a broken
    /// file still stops the start.
    static func startingPolicy(_ configuration: ServerConfiguration, compiler: PolicyCompiler, logger: Logger) async throws
        -> PolicyInForce.Snapshot
    {
        let fileName = configuration.policyPath ?? DemoPolicy.origin
        let text: String
        if let path = configuration.policyPath {
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw PolicyError(file: path, key: "", problem: "cannot be read (\(error.localizedDescription))")
            }
        } else {
            text = DemoPolicy.yaml
        }
        // A policy that keeps the demo's published secrets (the demo's own included) is refused by the compiler on any
        // host but loopback, where anyone who read the README could otherwise administer the server or log in.
        let file = try compiler.compile(yaml: text, file: fileName, version: 0)
        if let path = configuration.policyPath, case let published = DemoPolicy.publishedCredentials(in: file.policy), !published.isEmpty {
            logger.warning("\(path) keeps the demo's published secrets (\(published.joined(separator: ", "))): fine on loopback, refused on any other host")
        }
        guard let stored = try await compiler.store.latestPolicy() else { return file }
        do {
            let snapshot = try compiler.compile(yaml: stored.yaml, file: "stored policy version \(stored.version)", version: stored.version, stored: true)
            logger.notice("Running policy version \(stored.version), applied through the admin API by \(stored.actor); \(fileName) is not in force while the store holds an applied policy (apply it through the API to return to it)")
            return snapshot
        } catch {
            logger.error("The stored policy version \(stored.version) cannot run on this node (\(error)); running \(fileName) instead")
            return file
        }
    }
}
