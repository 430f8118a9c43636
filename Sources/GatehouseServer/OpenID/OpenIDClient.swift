import Foundation
import GatehouseChecks
import GatehouseProtocol

/// An OpenID Connect relying party declared in the policy (``PolicyFile/OpenIDClientEntry``): its redirect URIs, the
/// scope it may ask for, the checks its users sign in with, and how its id_tokens are signed.
///
/// Every client's sign-in runs as one application (``application``: ``signInApplication``, platform ``platform``):
/// each browser's sign-in session is a registration of it, so the checks keep their state per browser exactly as per
/// app instance — attempts, blocks, a login's success and its expiry — and a user signed in for one client is signed
/// in for the others (single sign-on), each client asking for the checks of its own scope mapping.
public struct OpenIDClient: Sendable {
    /// The platform of the application OpenID clients sign in as.
    public static let platform = "openid"
    /// The id of that application: one for every client.
    public static let signInApplication = "gatehouse.openid"

    /// How the id_token is signed.
    public enum SigningAlgorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256", es256 = "ES256"
    }

    public let id: String
    public let displayName: String
    /// A bcrypt hash of the secret; `nil` for a public client (PKCE required).
    let secretHash: String?
    /// Whether the client has no secret (it must use PKCE with S256).
    public var isPublic: Bool { secretHash == nil }
    /// Redirect URIs, compared exactly.
    public let redirectURIs: [String]
    /// Post-logout redirect URIs, compared exactly.
    public let postLogoutRedirectURIs: [String]
    /// The scope values it may ask for, `openid` among them.
    public let allowedScope: Set<String>
    public let signingAlgorithm: SigningAlgorithm
    /// Seconds.
    public let accessTokenLifetime: Int
    /// Seconds.
    public let refreshTokenLifetime: Int
    /// The application every client's sign-in runs as: the policy's checks, their `requires`, the `acr` levels.
    public let application: ApplicationPolicy
    /// Scope value → the checks this client's sign-in runs for it (`scopeElementMapping`).
    public let scopeMapping: [String: [String]]

    /// The checks a sign-in for `scope` runs, with those that prove `acrValues` (the first value this client's checks
    /// can prove; RFC 9470 step-up) and the checks they require. Empty when the client maps nothing.
    func checkNames(for scope: Scope, acrValues: [String]) -> Set<String> {
        var names: Set<String> = []
        for element in scope.elements { names.formUnion(scopeMapping[element] ?? []) }
        let contexts = application.authenticationContexts
        if let wanted = acrValues.first(where: { contexts.levels[$0] != nil }), let level = contexts.levels[wanted] {
            // Checks proving the requested class, or one of a higher level (the lowest such level).
            let candidates = contexts.checks.filter { (contexts.levels[$0.value] ?? Int.min) >= level }
            if let lowest = candidates.map({ contexts.levels[$0.value]! }).min() {
                names.formUnion(candidates.filter { contexts.levels[$0.value] == lowest }.keys)
            }
        }
        return names
    }

    /// Whether `uri` is one of the registered redirect URIs, compared as strings (OpenID Connect Core §3.1.2.1: exact).
    func allowsRedirect(_ uri: String) -> Bool { redirectURIs.contains(uri) }
}

extension SecurityPolicy {
    /// The `openIDClients` of a policy file, checked.
    static func openIDClients(of policy: PolicyFile, file: String, contexts: AuthenticationContexts, dependencies: [String: [String]],
                              registry: SecurityCheckRegistry, services: SecurityCheckServices, warnings: inout [String]) throws -> [OpenIDClient] {
        var clients: [OpenIDClient] = []
        guard let entries = policy.openIDClients, !entries.isEmpty else { return [] }
        let definitions = policy.securityChecks ?? [:]
        let checks = try makeChecks(definitions, overrides: [:], key: "openIDClients", file: file, registry: registry, services: services,
                                    warnings: &warnings)
        // One application for every client's sign-in; a token's lifetime is the client's own (accessTokenLifetimeSec).
        var application = ApplicationPolicy(
            id: OpenIDClient.signInApplication, platform: OpenIDClient.platform, version: nil, scopeElementMapping: [:], mandatoryScope: [],
            maxTokenExpiration: 86_400, checks: checks)
        application.dependencies = dependencies
        application.authenticationContexts = contexts
        for (index, entry) in entries.enumerated() {
            let key = "openIDClients[\(index)]"
            guard !entry.id.isEmpty, entry.id.utf8.count <= 128, !entry.id.contains(where: { $0.isWhitespace || $0 == ":" }) else {
                throw PolicyError(file: file, key: "\(key).id", problem: "must be 1 to 128 characters, without spaces or ':'")
            }
            guard !clients.contains(where: { $0.id == entry.id }) else {
                throw PolicyError(file: file, key: "\(key).id", problem: "'\(entry.id)' is listed twice")
            }
            var secretHash: String?
            if let hash = entry.secretHash {
                guard let usable = PasswordVerifier.usableBcryptHash(hash) else {
                    throw PolicyError(file: file, key: "\(key).secretHash",
                                      problem: "must be a whole bcrypt hash (`gatehouse hash-password --new-client-secret`), never a secret")
                }
                secretHash = usable
            }
            guard !entry.redirectURIs.isEmpty else {
                throw PolicyError(file: file, key: "\(key).redirectURIs", problem: "must list at least one redirect URI")
            }
            for (uriIndex, uri) in entry.redirectURIs.enumerated() {
                if let problem = Self.redirectURIProblem(uri) {
                    throw PolicyError(file: file, key: "\(key).redirectURIs[\(uriIndex)]", problem: problem)
                }
            }
            for (uriIndex, uri) in (entry.postLogoutRedirectURIs ?? []).enumerated() {
                if let problem = Self.redirectURIProblem(uri) {
                    throw PolicyError(file: file, key: "\(key).postLogoutRedirectURIs[\(uriIndex)]", problem: problem)
                }
            }
            let algorithmName = entry.idTokenSigningAlg ?? "RS256"
            guard let algorithm = OpenIDClient.SigningAlgorithm(rawValue: algorithmName) else {
                throw PolicyError(file: file, key: "\(key).idTokenSigningAlg", problem: "must be RS256 or ES256")
            }
            let accessLifetime = entry.accessTokenLifetimeSec ?? 300
            guard (1...86_400).contains(accessLifetime) else {
                throw PolicyError(file: file, key: "\(key).accessTokenLifetimeSec", problem: "must be between 1 and 86400 seconds")
            }
            let refreshLifetime = entry.refreshTokenLifetimeSec ?? 86_400
            guard (60...86_400 * 365).contains(refreshLifetime) else {
                throw PolicyError(file: file, key: "\(key).refreshTokenLifetimeSec", problem: "must be between 60 and 31536000 seconds")
            }
            let mapping = try scopeElementMapping(entry.scopeElementMapping, checks: checks, key: key, file: file)
            guard !(mapping["openid"] ?? []).isEmpty else {
                throw PolicyError(file: file, key: "\(key).scopeElementMapping.openid",
                                  problem: "must name the checks users sign in with (openid: UserLogin)")
            }
            var allowed = Set((entry.allowedScope ?? "openid").split(separator: " ").map(String.init))
            allowed.insert("openid")
            clients.append(OpenIDClient(
                id: entry.id, displayName: entry.displayName ?? entry.id, secretHash: secretHash, redirectURIs: entry.redirectURIs,
                postLogoutRedirectURIs: entry.postLogoutRedirectURIs ?? [], allowedScope: allowed, signingAlgorithm: algorithm,
                accessTokenLifetime: accessLifetime, refreshTokenLifetime: refreshLifetime, application: application, scopeMapping: mapping))
        }
        return clients
    }

    /// Why `uri` cannot be a redirect URI (OpenID Connect Core §3.1.2.1, RFC 6749 §3.1.2): absolute, no fragment, and
    /// `https` unless it is on this machine (`http://localhost`, `127.0.0.1`) or an app's own scheme.
    static func redirectURIProblem(_ uri: String) -> String? {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(), !scheme.isEmpty else {
            return "'\(uri.prefix(120))' is not an absolute URI"
        }
        guard components.fragment == nil else { return "'\(uri.prefix(120))' has a fragment, which a redirect URI must not have" }
        guard !uri.contains("*") else { return "'\(uri.prefix(120))' has a wildcard: redirect URIs are matched exactly" }
        if scheme == "http" {
            guard let host = components.host, LoopbackHost.contains(host) || host.lowercased() == "localhost" else {
                return "'\(uri.prefix(120))' is plain http on another host than this machine: use https"
            }
        } else if scheme == "https" {
            guard components.host?.isEmpty == false else { return "'\(uri.prefix(120))' has no host" }
        } else if scheme == "javascript" || scheme == "data" || scheme == "file" {
            return "'\(uri.prefix(120))' has the scheme \(scheme), which cannot be a redirect URI"
        }
        return nil
    }
}
