import NIOSSL
import GatehouseHTTP
import GatehouseChecks
import Foundation
import GatehouseResourceServer
import HTTPTypes
public import Logging
import NIOCore
import Synchronization

/// Building a gateway from its YAML configuration: realms, login modules, services, TLS.
extension Gateway {
    /// A gateway from a configuration; `customModules` are the login modules that `type:` names besides
    /// `users` and `gatehouse-token`; `tracer`, where its traces go (``Gateway/tracer``).
    public convenience init(configuration: GatewayConfiguration, customModules: [String: any LoginModule] = [:],
                            tracer: OTLPTracer? = nil, logger: Logger = Logger(label: "gatehouse-gateway")) throws {
        let lockoutPolicy: AccountLockoutPolicy
        do {
            lockoutPolicy = try (configuration.accountLockout ?? AccountLockoutSettings()).policy()
        } catch {
            throw GatewayConfigurationError("accountLockout.\(error.key) \(error.problem)")
        }
        let lockouts = InMemoryAccountLockouts(policy: lockoutPolicy)
        let sourcePolicy: AccountLockoutPolicy
        do {
            sourcePolicy = try (configuration.sourceThrottle ?? AccountLockoutSettings()).policy(defaults: SourceThrottle.defaultPolicy)
        } catch {
            throw GatewayConfigurationError("sourceThrottle.\(error.key) \(error.problem)")
        }
        // One throttle for every `users` module: an address's failures count whichever realm they were tried on.
        let sources = SourceThrottle(policy: sourcePolicy, lanes: SourceLanes()) { InMemoryAccountLockouts(policy: $0) }
        var realms: [String: Realm] = [:]
        for realm in configuration.realms {
            var entries: [LoginChain.Entry] = []
            for module in realm.loginModules {
                entries.append(.init(try Self.makeModule(module, custom: customModules, lockouts: lockouts, sources: sources), flag: module.flag))
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
            return try ProtectedService(name: service.name, path: service.path, upstream: upstream, realm: realm, requiredRoles: roles,
                               webSocket: service.webSocket ?? false, allowedOrigins: service.allowedOrigins,
                               inactivityTimeout: try service.inactivityTimeout.map { seconds in
                                   guard seconds.isFinite, seconds >= 0.002, seconds <= 86_400 else {
                                       throw GatewayConfigurationError("service \(service.name): inactivityTimeout must be between 0.002 and 86400 seconds")
                                   }
                                   return .milliseconds(Int64((seconds * 1000).rounded()))
                               })
        }
        func timeout(_ seconds: Double?, _ fallback: Double, _ name: String) throws -> Duration {
            let value = seconds ?? fallback
            guard value > 0, value <= 86_400 else { throw GatewayConfigurationError("\(name) must be between 0 and 86400 seconds") }
            return .milliseconds(Int64(value * 1000))
        }
        let trustedProxies: TrustedProxies
        do {
            trustedProxies = try TrustedProxies(configuration.trustedProxies ?? [], forwardedField: configuration.forwardedHeader ?? .xForwardedFor)
        } catch {
            throw GatewayConfigurationError(error.description)
        }
        self.init(services: services, host: configuration.host, port: configuration.port,
                  maxWebSocketMessageSize: configuration.maxWebSocketMessageSize ?? 1 << 20,
                  trustedProxies: trustedProxies,
                  headerReadTimeout: try timeout(configuration.headerReadTimeout, GatewayConfiguration.defaultHeaderReadTimeout, "headerReadTimeout"),
                  idleTimeout: try timeout(configuration.idleTimeout, GatewayConfiguration.defaultIdleTimeout, "idleTimeout"),
                  upstreamReadTimeout: try timeout(configuration.upstreamReadTimeout, GatewayConfiguration.defaultUpstreamReadTimeout,
                                                   "upstreamReadTimeout"),
                  tls: try configuration.tls.map { try ReloadableTLS(certificatePath: $0.certificate, keyPath: $0.key) },
                  upstreamTLS: try configuration.upstreamCAFile.map { (try Self.upstreamTLS(caFile: $0), $0) },
                  clientCertificates: configuration.tls?.clientCertificates ?? false,
                  tracer: tracer,
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
                           lockouts: any AccountLockouts, sources: SourceThrottle? = nil) throws -> any LoginModule {
        switch module.type {
        case "users":
            var users = module.users ?? []
            if let file = module.usersFile {
                guard FileManager.default.isReadableFile(atPath: file) else {
                    throw GatewayConfigurationError("users module: usersFile \(file) cannot be read")
                }
                users += try YAMLUsers.load(path: file)
            }
            for index in users.indices {
                guard let hash = PasswordVerifier.usableBcryptHash(users[index].passwordHash) else {
                    throw GatewayConfigurationError("users module: user \(users[index].username)'s passwordHash is not a whole bcrypt hash (`gatehouse hash-password`)")
                }
                if let problem = PasswordVerifier.costProblem(of: hash) {
                    throw GatewayConfigurationError("users module: user \(users[index].username)'s passwordHash \(problem)")
                }
                users[index].passwordHash = hash
            }
            return UsersLoginModule(users: users, lockouts: lockouts, sources: sources)
        case "gatehouse-token":
            if let introspection = module.introspection {
                return GatehouseTokenLoginModule(
                    verifier: IntrospectionTokenVerifier(serverURL: introspection.serverURL, clientID: introspection.clientID, secret: introspection.secret),
                    requiredScope: module.requiredScope, acrValues: module.acrValues ?? [], maxAge: module.maxAge)
            }
            guard let jwks = module.jwksURL else { throw GatewayConfigurationError("gatehouse-token module needs jwksURL or introspection") }
            if let maxAge = module.maxAge, maxAge <= 0 { throw GatewayConfigurationError("gatehouse-token module: maxAge must be a positive number of seconds") }
            return GatehouseTokenLoginModule(verifier: LocalTokenVerifier(jwksURL: jwks), requiredScope: module.requiredScope,
                                             acrValues: module.acrValues ?? [], maxAge: module.maxAge)
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
}
