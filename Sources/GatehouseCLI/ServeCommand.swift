public import ArgumentParser
import Foundation
import GatehousePostgres
import GatehouseSQLite
import GatehouseServer
import GatehouseStore
import GatehouseHTTP
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// `gatehouse serve`: runs the authorization server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the authorization server (the demo policy on a loopback port when given no options).",
        discussion: "Every option can also come from the environment: GATEHOUSE_<OPTION>, e.g. GATEHOUSE_PORT=8443, GATEHOUSE_TLS_CERTIFICATE=chain.pem; the command line wins."
    )

    @Option(help: "The policy file (YAML). Without it, the demo policy runs.")
    var policy: String?

    @Option(help: "The folder of the embedded database.")
    var data: String = ".gatehouse"

    @Option(help: ArgumentHelp(
        "A PostgreSQL database shared by several nodes, instead of the embedded one in --data.",
        discussion: "postgres://user:password@host:port/database, options sslmode=disable|prefer|require, pool_size (10), connect_timeout (s), idle_ping (s between checks of idle connections; none by default).",
        valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp(
        "Seconds to wait at start for a --database that is not up yet (0: fail at once).",
        discussion: "While it waits, the node does not listen; a wrong password or a missing database fails at once."))
    var databaseWait: Int = 60

    @Option(help: "Seconds one store call may take before its request is answered 503 (a frozen or restarting database).")
    var storeTimeout: Double = 5

    @Flag(help: "Store a new token-signing key that becomes the current one of every node; older keys keep verifying their tokens.")
    var rotateSigningKey = false

    @Option(help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: ArgumentHelp(
        "This server's public base URL: the tokens' iss and the RFC 8414 issuer (default http://<host>:<port>).", valueName: "url"))
    var issuer: String?

    @Option(help: "Retire signing keys older than this many days once a newer key is current (default: only `gatehouse keys retire`).")
    var retireSigningKeysAfterDays: Int?

    @OptionGroup var tls: TLSOptions

    @Option(help: ArgumentHelp("The certificate authorities (PEM: roots and intermediates) of tls_client_auth clients' certificates; implies --tls-client-certificates.",
                               valueName: "file"))
    var tlsClientCa: String?

    @OptionGroup var tracing: TracingOptions

    @Option(help: "Seconds a keep-alive connection may sit idle before it is closed.")
    var idleTimeout: Int = 60

    @Option(help: "Seconds a new connection has to send its first request head (slowloris; plain HTTP).")
    var headerReadTimeout: Int = 10

    @Option(help: ArgumentHelp(
        "Run each connection's requests on the thread that owns its socket (NIO's event loop): true or false.",
        discussion: "false only for custom security checks that block their thread (synchronous I/O), which would stall the other connections of that thread."))
    var connectionsOnEventLoop: Bool = true

    @OptionGroup var loops: EventLoopOptions

    @Option(help: ArgumentHelp(
        "Who may read /metrics: open (anyone who reaches the port) or token (a confidential client's bearer token with scope gatehouse.metrics or an admin scope).",
        discussion: "Default: open on a loopback --host, token beyond it."))
    var metricsAccess: ServerConfiguration.MetricsAccess?

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp(
        "A reverse proxy (address or CIDR block; repeatable, or comma-separated) whose Forwarded / X-Forwarded-For|Host|Proto are believed.",
        discussion: "The client's address (throttles, audit log) and the host its page came from (the same-origin test) are then taken from them; every other peer's are ignored."))
    var trustedProxies: [String] = []

    @Option(help: ArgumentHelp(
        "The one forwarding field the --trusted-proxy addresses set: x-forwarded-for (with X-Forwarded-Host|Proto) or forwarded (RFC 7239).",
        discussion: "Only that field is read; the other is whatever the client wrote (nginx passes it through). Default: x-forwarded-for, what the nginx files in Examples/nginx set."))
    var forwardedHeader: TrustedProxies.ForwardedField = .xForwardedFor

    @Option(help: "This node's name in the audit log (default: the host name).")
    var nodeName: String?

    @Option(help: ArgumentHelp("A folder with the OpenID sign-in page's theme: theme.css and strings.json (see docs/openid-connect.md).",
                               valueName: "folder"))
    var signInTheme: String?

    @Option(help: "Days the audit log keeps its events.")
    var auditRetentionDays: Int = 90

    @Option(help: "Also write every audit event as one JSON line to the log (label gatehouse.audit): true or false.")
    var auditLogLines: Bool = false

    @Option(help: "Seconds between two reads of the store for a policy an operator applied on another node.")
    var policyPollInterval: Int = 2

    @Option(help: "What an SQLite commit survives: normal (a process crash; no fsync per commit) or full (a power loss too).")
    var sqliteDurability: SQLiteStore.Durability = .normal

    @Option(help: "Serve the seeds' sample adapter (ResourceAdapter: /mfp/api/adapters/ResourceAdapter/balance) with a --policy too: true or false. Always served with the demo policy.")
    var sampleAdapter: Bool = false

    @Option(help: "How much to log.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if let issuer {
            guard let url = URL(string: issuer), let scheme = url.scheme, scheme == "https" || scheme == "http", url.host != nil,
                url.query == nil, url.fragment == nil
            else { throw ValidationError("--issuer must be an http(s) URL without query or fragment, e.g. https://auth.example.com") }
        }
        if let days = retireSigningKeysAfterDays, days < 1 { throw ValidationError("--retire-signing-keys-after-days must be at least 1") }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be between 1 and 3600 seconds") }
        guard (1...3600).contains(policyPollInterval) else { throw ValidationError("--policy-poll-interval must be between 1 and 3600 seconds") }
        guard (1...3600).contains(headerReadTimeout) else { throw ValidationError("--header-read-timeout must be between 1 and 3600 seconds") }
        guard (0...86_400).contains(databaseWait) else { throw ValidationError("--database-wait must be between 0 and 86400 seconds") }
        guard (0.05...600).contains(storeTimeout) else { throw ValidationError("--store-timeout must be between 0.05 and 600 seconds") }
        if tlsClientCa != nil, tls.files == nil {
            throw ValidationError("--tls-client-ca needs --tls-certificate and --tls-key: client certificates come with TLS")
        }
        if let database {
            do {
                _ = try PostgresLocation(url: database)
            } catch {
                throw ValidationError("--database: \(error)")
            }
        }
    }

    func run() async throws {
        loops.apply()
        umask(0o077)   // every file the server creates (database, WAL, logs) is the owner's only
        var logger = Logger(label: "gatehouse")
        logger.logLevel = logLevel
        OpenFileLimit.check(logger: logger)
        // The store: PostgreSQL when --database names one, else the embedded SQLite in --data.
        let store: any GatehouseStore
        var postgres: PostgresStore?
        if let database {
            let location = try PostgresLocation(url: database)
            do {
                postgres = try await Self.connect(location, waiting: .seconds(databaseWait), logger: logger)
            } catch {
                throw CommandFailure("Cannot open the PostgreSQL database \(location)", error)
            }
            store = postgres!
            logger.info("Store: PostgreSQL \(location)")
        } else {
            store = try SQLiteStore.open(dataDirectory: data, durability: sqliteDurability)
        }
        var configuration = ServerConfiguration(store: store)
        configuration.policyPath = policy
        configuration.adapters = policy == nil || sampleAdapter ? [ResourceAdapter()] : []
        configuration.host = host
        configuration.port = port
        configuration.issuer = issuer
        if let signInTheme {
            do {
                configuration.signInTheme = try SignInTheme.load(folder: signInTheme)
            } catch {
                throw CommandFailure("--sign-in-theme: \(error)")
            }
        }
        configuration.signingKeyMaxAge = retireSigningKeysAfterDays.map { .seconds($0 * 86_400) }
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.headerReadTimeout = .seconds(headerReadTimeout)
        configuration.connectionTasksOnEventLoop = connectionsOnEventLoop
        configuration.nodeName = nodeName
        configuration.metricsAccess = metricsAccess
        do {
            configuration.trustedProxies = try TrustedProxies(trustedProxies.flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } },
                                                              forwardedField: forwardedHeader)
        } catch {
            throw ValidationError("--\(error.description.replacingOccurrences(of: "trustedProxies", with: "trusted-proxy"))")
        }
        configuration.auditRetentionDays = auditRetentionDays
        configuration.auditLines = auditLogLines ? Logger(label: "gatehouse.audit") : nil
        configuration.policyPollInterval = .seconds(policyPollInterval)
        configuration.storeDeadline = .milliseconds(Int(storeTimeout * 1000))
        configuration.tracer = try tracing.tracer(serviceName: "gatehouse", version: Gatehouse.version, logger: logger)
        var reloading: Task<Void, Never>?
        defer { reloading?.cancel() }
        do {
            if let files = tls.files {
                do {
                    let tls = try ReloadableTLS(certificatePath: files.certificate, keyPath: files.key)
                    configuration.tls = tls
                    reloading = tls.reloadOnHangup(logger: logger)
                    configuration.requestClientCertificates = self.tls.tlsClientCertificates
                    configuration.clientCertificateAuthorities = try tlsClientCa.map { try ClientCertificateAuthorities(pemFile: $0) }
                } catch {
                    throw CommandFailure("TLS", error)
                }
            }
            try await serve(configuration, logger: logger)
        } catch {
            await postgres?.shutdown()
            throw error
        }
        await postgres?.shutdown()
    }

    private func serve(_ configuration: ServerConfiguration, logger: Logger) async throws {
        if rotateSigningKey {
            let kid = try await TokenSigner.rotate(in: configuration.store)
            logger.notice("New token-signing key \(kid) is current; older keys still verify their tokens")
        }
        let host = self.host
        let tls = configuration.tls != nil
        // The policy the server starts with: the demo's banner only while the demo policy is what runs (a policy
        // applied through the admin API, kept in the store, takes its place).
        let origin = Mutex("")
        let app: GatehouseApplication
        do {
            app = try await Gatehouse.makeApplication(
                configuration, logger: logger,
                onServerRunning: { port in Self.printBanner(host: host, port: port, policy: origin.withLock { $0 }, tls: tls) },
                onPolicy: { chosen in origin.withLock { $0 = chosen } })
        } catch let error as PolicyError {
            throw CommandFailure("Policy error: \(error)")
        }
        do {
            if connectionsOnEventLoop {
                // The accept loop, and each connection's task until it moves to its own loop, start on an event loop
                // too: an accepted connection is not handed through Swift concurrency's shared threads.
                try await withTaskExecutorPreference(EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())) {
                    try await app.runService(logger: logger)
                }
            } else {
                try await app.runService(logger: logger)
            }
        } catch let error as IOError {
            throw CommandFailure("Cannot serve on \(host):\(port)", error)
        }
    }

    /// Connects to `location`; while the database is not up yet (refused, starting, unreachable) tries again with a
    /// growing pause, up to `waiting`, saying so once on standard output. Any other failure ends at once.
    static func connect(_ location: PostgresLocation, waiting: Duration, logger: Logger) async throws -> PostgresStore {
        let deadline = ContinuousClock.now + waiting
        var pause = Duration.milliseconds(250)
        var said = false
        while true {
            do {
                return try await PostgresStore.connect(location, logger: logger)
            } catch {
                guard let outage = PostgresStore.outage(of: error), ContinuousClock.now + pause < deadline else { throw error }
                if !said {
                    said = true
                    FileHandle.standardOutput.write(Data("Waiting for PostgreSQL at \(location) (up to \(waiting)): \(outage.reason)\n".utf8))
                }
                logger.debug("PostgreSQL not up yet", metadata: ["reason": .string(outage.reason)])
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    static func printBanner(host: String, port: Int, policy: String, tls: Bool = false) {
        let base = "\(tls ? "https" : "http")://\(host):\(port)"
        var text = "Gatehouse listens on \(base) — runtime API at \(base)/mfp/api\n"
        if policy != DemoPolicy.origin {
            text += "Policy: \(policy).\n"
        } else {
            text += """
                Demo policy: checks SimpleCaptcha, PinCodeAttempts (PIN 1234, 3 attempts) and UserLogin (john/demo, jane/secret);
                scope element accessRestricted -> PinCodeAttempts; apps com.sample.pincodeswift and com.sample.simplecaptcha
                (ios, android) and com.sample.web (web).
                Try it:
                  curl -s \(base)/health
                  gatehouse pincode --server \(base)     (PIN 1234; also captcha, login)
                  \(base)/console     (demo-admin / demo-admin-secret)
                Stop with Ctrl-C.

                """
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

extension SQLiteStore.Durability: ExpressibleByArgument {}

/// `--metrics-access open|token`.
extension ServerConfiguration.MetricsAccess: ExpressibleByArgument {}

/// `--forwarded-header x-forwarded-for|forwarded`.
extension TrustedProxies.ForwardedField: ExpressibleByArgument {}
