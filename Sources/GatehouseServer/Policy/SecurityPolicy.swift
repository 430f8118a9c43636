import Foundation
public import GatehouseChecks
public import GatehouseProtocol
import Yams

/// The server's whole policy: every application with its configured checks, and the users to provision.
public struct SecurityPolicy: Sendable {
    public let applications: [ApplicationPolicy]
    public let users: [UserRecord]
    public let confidentialClients: [ConfidentialClient]
    /// The OpenID Connect relying parties, by id.
    public var openIDClients: [String: OpenIDClient] = [:]
    /// Warnings met while reading the policy, as `key: message`.
    public let warnings: [String]
    /// Per-account lockout of password logins.
    public var accountLockout = AccountLockoutPolicy()
    /// Password checks per source address (``SourceThrottle``); threshold 0: not throttled by source.
    public var sourceThrottle = SourceThrottle.defaultPolicy
    /// Registrations per source address and window; `nil` when not throttled.
    public var registrationThrottle: (count: Int, window: Int64)? = (300, 60_000)

    /// The policy of the application a client registered with, if the policy knows it.
    public func application(for data: ApplicationData) -> ApplicationPolicy? {
        applications.first { $0.matches(data) }
    }

    /// The shortest client key accepted from a client of `data`'s application.
    func minimumClientKeyBits(for data: ApplicationData) -> Int {
        application(for: data)?.minimumClientKeyBits ?? ClientSignature.defaultMinimumBits
    }

    /// Every origin some application allows (CORS), lowercased.
    var allowedOrigins: Set<String> { applications.reduce(into: []) { $0.formUnion($1.allowedOrigins) } }

    /// Reads a policy file; every problem is a ``PolicyError`` naming the file and key.
    public static func load(path: String, registry: SecurityCheckRegistry, services: SecurityCheckServices) throws -> SecurityPolicy {
        try build(try decode(path: path), file: path, registry: registry, services: services)
    }

    /// Reads a policy from YAML text; `file` names it in errors.
    public static func parse(yaml: String, file: String, registry: SecurityCheckRegistry, services: SecurityCheckServices) throws -> SecurityPolicy {
        try build(try decode(yaml: yaml, file: file), file: file, registry: registry, services: services)
    }

    /// The policy file at `path`, decoded but not yet checked.
    public static func decode(path: String) throws -> PolicyFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw PolicyError(file: path, key: "", problem: "cannot be read (\(error.localizedDescription))")
        }
        return try decode(yaml: text, file: path)
    }

    /// YAML text decoded, not yet checked; a key it does not know is refused.
    public static func decode(yaml: String, file: String) throws -> PolicyFile {
        try decode(yaml: yaml, file: file, unknownKeys: { throw $0 })
    }

    /// YAML text decoded; `unknownKeys` is given the error of a key the policy does not know (throw it to refuse the
    /// policy, or keep it as a warning: a policy stored before keys were checked still runs).
    static func decode(yaml: String, file: String, unknownKeys: (PolicyError) throws -> Void) throws -> PolicyFile {
        // The text composed once: checked for its keys, then decoded. Text that is no YAML is the decoder's to say
        // (its error names the line and column).
        let document: Node?
        do {
            document = try Yams.compose(yaml: yaml)
        } catch {
            // Not YAML: said as the decoder says it (with its line and column).
            do { _ = try YAMLDecoder().decode(PolicyFile.self, from: yaml) } catch let error as DecodingError { throw Self.policyError(file: file, error) }
            throw PolicyError(file: file, key: "", problem: "is not valid YAML (\(error))")
        }
        // No document (blanks and comments), or one that is only `---` or `~`.
        guard let document, document.tag.rawValue != Tag.Name.null.rawValue else {
            throw PolicyError(file: file, key: "", problem: "is empty: a policy has at least its applications (see `gatehouse demo-policy`)")
        }
        if let unknown = PolicyFile.yamlKeys.unknownKey(in: document) {
            try unknownKeys(PolicyError(file: file, key: unknown.path,
                                        problem: "is not a policy key (known there: \(unknown.known.joined(separator: ", ")))"))
        }
        do {
            return try YAMLDecoder().decode(PolicyFile.self, from: document)
        } catch let error as DecodingError {
            throw Self.policyError(file: file, error)
        } catch {
            throw PolicyError(file: file, key: "", problem: "is not valid YAML (\(error))")
        }
    }

    /// The account lockout a policy file asks for, checked.
    public static func accountLockout(of policy: PolicyFile, file: String) throws -> AccountLockoutPolicy {
        do {
            return try (policy.accountLockout ?? AccountLockoutSettings()).policy()
        } catch {
            throw PolicyError(file: file, key: "accountLockout.\(error.key)", problem: error.problem)
        }
    }

    /// The source throttle a policy file asks for, checked.
    public static func sourceThrottle(of policy: PolicyFile, file: String) throws -> AccountLockoutPolicy {
        do {
            return try (policy.sourceThrottle ?? AccountLockoutSettings()).policy(defaults: SourceThrottle.defaultPolicy)
        } catch {
            throw PolicyError(file: file, key: "sourceThrottle.\(error.key)", problem: error.problem)
        }
    }

    /// The bcrypt cost of the policy's own hashes, for decoys.
    public static func decoyCost(of policy: PolicyFile) -> UInt8 {
        PasswordVerifier.decoyCost(for: (policy.users ?? []).map(\.passwordHash) + (policy.confidentialClients ?? []).compactMap(\.secretHash))
    }

    static func build(_ policy: PolicyFile, file: String, registry: SecurityCheckRegistry, services: SecurityCheckServices,
                      warnings known: [String] = []) throws -> SecurityPolicy {
        var warnings = known
        let definitions = policy.securityChecks ?? [:]
        for (name, definition) in definitions {
            guard !name.isEmpty, name != Scope.registeredClient, !name.contains(" ") else {
                throw PolicyError(file: file, key: "securityChecks.\(name)", problem: "is not a usable check name")
            }
            guard !name.hasPrefix("gatehouse_") else {
                throw PolicyError(file: file, key: "securityChecks.\(name)",
                                  problem: "starts with gatehouse_, which Gatehouse's own failures are named with (\(DeviceAccessWire.failureName))")
            }
            guard registry.factories[definition.class] != nil else {
                throw PolicyError(
                    file: file, key: "securityChecks.\(name).class",
                    problem: "unknown check class '\(definition.class)' (known: \(registry.factories.keys.sorted().joined(separator: ", ")))")
            }
        }
        let dependencies = try Self.dependencies(of: definitions, file: file)
        let contexts = try Self.authenticationContexts(of: policy, file: file)
        // A policy serves apps, OpenID clients, or both.
        let applicationEntries = policy.applications ?? []
        guard !applicationEntries.isEmpty || !(policy.openIDClients ?? []).isEmpty else {
            throw PolicyError(file: file, key: "applications", problem: "must list at least one application (or an OpenID client in openIDClients)")
        }
        var applications: [ApplicationPolicy] = []
        for (index, entry) in applicationEntries.enumerated() {
            let key = "applications[\(index)]"
            guard !entry.id.isEmpty else { throw PolicyError(file: file, key: "\(key).id", problem: "must not be empty") }
            guard !entry.platform.isEmpty else { throw PolicyError(file: file, key: "\(key).platform", problem: "must not be empty") }
            let overrides = entry.securityCheckConfigurations ?? [:]
            for name in overrides.keys where definitions[name] == nil {
                throw PolicyError(file: file, key: "\(key).securityCheckConfigurations.\(name)", problem: "names no check in securityChecks")
            }
            let checks = try makeChecks(definitions, overrides: overrides, key: key, file: file, registry: registry, services: services,
                                        warnings: &warnings)
            let mapping = try scopeElementMapping(entry.scopeElementMapping, checks: checks, key: key, file: file)
            let mandatory = Scope(entry.mandatoryScope).customElements
            for element in mandatory where mapping[element] == nil && checks[element] == nil {
                throw PolicyError(file: file, key: "\(key).mandatoryScope", problem: "element '\(element)' maps to no check")
            }
            let maxTokenExpiration = entry.maxTokenExpiration ?? 3600
            guard (1...86_400 * 365).contains(maxTokenExpiration) else {
                throw PolicyError(file: file, key: "\(key).maxTokenExpiration", problem: "must be between 1 and 31536000 seconds")
            }
            var application = ApplicationPolicy(
                id: entry.id, platform: entry.platform, version: entry.version, scopeElementMapping: mapping,
                mandatoryScope: mandatory, maxTokenExpiration: maxTokenExpiration, checks: checks)
            application.dependencies = dependencies
            application.authenticationContexts = contexts
            if let bits = entry.minimumClientKeyBits {
                guard (ClientSignature.smallestAllowedBits...16_384).contains(bits) else {
                    throw PolicyError(file: file, key: "\(key).minimumClientKeyBits", problem: "must be between 512 and 16384")
                }
                if bits < ClientSignature.defaultMinimumBits {
                    warnings.append("\(file): \(key).minimumClientKeyBits: \(entry.id) (\(entry.platform)) accepts client keys of \(bits) bits, below the 2048-bit minimum; keep this for legacy apps only")
                }
                application.minimumClientKeyBits = bits
            }
            application.requireProofOfPossession = entry.requireProofOfPossession ?? false
            application.remoteDisable = try Self.remoteDisable(entry.versions, key: "\(key).versions", file: file)
            for (index, origin) in (entry.allowedOrigins ?? []).enumerated() {
                guard let normalized = CORS.normalizedOrigin(origin) else {
                    throw PolicyError(file: file, key: "\(key).allowedOrigins[\(index)]",
                                      problem: "'\(origin.prefix(80))' is not an origin (scheme://host[:port], no path, no wildcard)")
                }
                application.allowedOrigins.insert(normalized)
            }
            if applications.contains(where: { $0.id == application.id && $0.platform.lowercased() == application.platform.lowercased() && $0.version == application.version }) {
                throw PolicyError(file: file, key: key, problem: "application \(entry.id) (\(entry.platform)) is listed twice")
            }
            applications.append(application)
        }
        var users: [UserRecord] = []
        for (index, user) in (policy.users ?? []).enumerated() {
            guard !user.username.isEmpty else { throw PolicyError(file: file, key: "users[\(index)].username", problem: "must not be empty") }
            guard let passwordHash = PasswordVerifier.usableBcryptHash(user.passwordHash) else {
                throw PolicyError(file: file, key: "users[\(index)].passwordHash",
                                  problem: "must be a whole bcrypt hash ($2b$12$ and 53 more characters: `gatehouse hash-password`), never a password")
            }
            if let problem = PasswordVerifier.costProblem(of: passwordHash) {
                throw PolicyError(file: file, key: "users[\(index)].passwordHash", problem: problem)
            }
            users.append(UserRecord(username: user.username, displayName: user.displayName ?? user.username,
                                    passwordHash: passwordHash, attributes: user.attributes ?? [:]))
        }
        var confidentialClients: [ConfidentialClient] = []
        for (index, entry) in (policy.confidentialClients ?? []).enumerated() {
            let key = "confidentialClients[\(index)]"
            guard !entry.id.isEmpty, !entry.id.contains(":") else { throw PolicyError(file: file, key: "\(key).id", problem: "must be non-empty and without ':'") }
            let (secretHash, certificate) = try Self.authentication(of: entry, key: key, file: file)
            guard !confidentialClients.contains(where: { $0.id == entry.id }) else {
                throw PolicyError(file: file, key: "\(key).id", problem: "'\(entry.id)' is listed twice")
            }
            confidentialClients.append(ConfidentialClient(
                id: entry.id, displayName: entry.displayName ?? entry.id, secretHash: secretHash, certificate: certificate,
                allowedScope: entry.allowedScope.split(separator: " ").map(String.init)))
        }
        let openIDClients = try Self.openIDClients(of: policy, file: file, contexts: contexts, dependencies: dependencies,
                                                   registry: registry, services: services, warnings: &warnings)
        var result = SecurityPolicy(applications: applications + (openIDClients.first.map { [$0.application] } ?? []), users: users,
                                    confidentialClients: confidentialClients, warnings: warnings)
        result.openIDClients = Dictionary(uniqueKeysWithValues: openIDClients.map { ($0.id, $0) })
        result.accountLockout = try accountLockout(of: policy, file: file)
        result.sourceThrottle = try sourceThrottle(of: policy, file: file)
        if let throttle = policy.registrationThrottle {
            let count = throttle.perAddress ?? 300
            let window = throttle.windowSec ?? 60
            guard (0...1_000_000).contains(count) else {
                throw PolicyError(file: file, key: "registrationThrottle.perAddress", problem: "must be between 0 and 1000000")
            }
            guard (1...86_400).contains(window) else {
                throw PolicyError(file: file, key: "registrationThrottle.windowSec", problem: "must be between 1 and 86400")
            }
            result.registrationThrottle = count == 0 ? nil : (count, Int64(window) * 1000)
        }
        return result
    }


    /// A `scopeElementMapping` (element → space-separated check names) read, every name one of `checks`.
    static func scopeElementMapping(_ entries: [String: String]?, checks: [String: any SecurityCheck], key: String, file: String) throws
        -> [String: [String]]
    {
        var mapping: [String: [String]] = [:]
        for (element, target) in entries ?? [:] {
            let names = target.split(separator: " ").map(String.init)
            for name in names where checks[name] == nil {
                throw PolicyError(file: file, key: "\(key).scopeElementMapping.\(element)", problem: "maps to '\(name)', which is not in securityChecks")
            }
            mapping[element] = names
        }
        return mapping
    }

    /// The checks of `definitions`, created for one application (or OpenID client) with its property `overrides`.
    static func makeChecks(_ definitions: [String: PolicyFile.CheckDefinition], overrides: [String: [String: JSON]], key: String, file: String,
                           registry: SecurityCheckRegistry, services: SecurityCheckServices, warnings: inout [String]) throws
        -> [String: any SecurityCheck]
    {
        var checks: [String: any SecurityCheck] = [:]
        for (name, definition) in definitions {
            let values = (definition.properties ?? [:]).merging(overrides[name] ?? [:]) { _, app in app }
            var properties = SecurityCheckProperties(values)
            let check: any SecurityCheck
            do {
                check = try registry.factories[definition.class]!(name, &properties, services)
            } catch {
                throw PolicyError(file: file, key: "securityChecks.\(name)", problem: "could not be created: \(error)")
            }
            properties.warnAboutUnknownProperties()
            func propertyKey(_ property: String) -> String {
                overrides[name]?[property] != nil
                    ? "\(key).securityCheckConfigurations.\(name).\(property)" : "securityChecks.\(name).properties.\(property)"
            }
            if let (property, message) = properties.errors.sorted(by: { $0.key < $1.key }).first {
                throw PolicyError(file: file, key: propertyKey(property), problem: message)
            }
            for (property, message) in properties.warnings.sorted(by: { $0.key < $1.key }) {
                let warning = "\(file): \(propertyKey(property)): \(message)"
                if !warnings.contains(warning) { warnings.append(warning) }
            }
            checks[name] = check
        }
        return checks
    }

    private static func policyError(file: String, _ error: DecodingError) -> PolicyError {
        let (key, problem) = error.placeAndProblem
        return PolicyError(file: file, key: key, problem: problem)
    }
}
