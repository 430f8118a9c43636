import Foundation
import GatehouseChecks
import GatehouseProtocol

/// Policy entries compiled apart from the policy's own shape: an application's version rules and how a confidential
/// client authenticates (called by `SecurityPolicy.parse`).
extension SecurityPolicy {
    /// The checks each check requires (`securityChecks.<name>.requires`): checks of the policy, none itself, and no
    /// cycle (a check that requires itself through others could never run).
    static func dependencies(of definitions: [String: PolicyFile.CheckDefinition], file: String) throws -> [String: [String]] {
        var dependencies: [String: [String]] = [:]
        for (name, definition) in definitions {
            guard let required = definition.requires, !required.isEmpty else { continue }
            for (index, other) in required.enumerated() {
                guard definitions[other] != nil else {
                    throw PolicyError(file: file, key: "securityChecks.\(name).requires[\(index)]", problem: "'\(other.prefix(80))' is not in securityChecks")
                }
                guard other != name else {
                    throw PolicyError(file: file, key: "securityChecks.\(name).requires[\(index)]", problem: "a check cannot require itself")
                }
            }
            dependencies[name] = required
        }
        // Depth-first from each check, in name order: a check met again on its own path closes a cycle.
        var done: Set<String> = []
        func visit(_ name: String, path: [String]) throws {
            if done.contains(name) { return }
            if let start = path.firstIndex(of: name) {
                let cycle = (path[start...] + [name]).joined(separator: " → ")
                throw PolicyError(file: file, key: "securityChecks.\(path[start]).requires", problem: "makes a cycle (\(cycle)): no check of it could ever run")
            }
            for other in dependencies[name] ?? [] { try visit(other, path: path + [name]) }
            done.insert(name)
        }
        for name in dependencies.keys.sorted() { try visit(name, path: []) }
        return dependencies
    }

    /// The `acr` each check's success proves and the levels of the `acr` values (`authenticationContexts`): every
    /// check's `acr` a declared one, levels between 0 and 1000, values without spaces (RFC 9470's `acr_values` is
    /// a space-separated list).
    static func authenticationContexts(of policy: PolicyFile, file: String) throws -> AuthenticationContexts {
        let levels = policy.authenticationContexts ?? [:]
        for (value, level) in levels {
            guard !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" }) else {
                throw PolicyError(file: file, key: "authenticationContexts.\(value.prefix(80))", problem: "must be an acr value without spaces or quotes")
            }
            guard (0...1000).contains(level) else {
                throw PolicyError(file: file, key: "authenticationContexts.\(value.prefix(80))", problem: "must be a level between 0 and 1000")
            }
        }
        var checks: [String: String] = [:]
        for (name, definition) in policy.securityChecks ?? [:] {
            guard let acr = definition.acr else { continue }
            guard levels[acr] != nil else {
                throw PolicyError(file: file, key: "securityChecks.\(name).acr",
                                  problem: "'\(acr.prefix(80))' is not in authenticationContexts (the acr values with their levels)")
            }
            checks[name] = acr
        }
        return AuthenticationContexts(levels: levels, checks: checks)
    }

    /// An application's version rules as its ``RemoteDisable`` check; `nil` without rules.
    static func remoteDisable(_ entries: [PolicyFile.VersionStatus]?, key: String, file: String) throws -> RemoteDisable? {
        guard let entries, !entries.isEmpty else { return nil }
        var rules: [RemoteDisable.Rule] = []
        for (index, entry) in entries.enumerated() {
            func refuse(_ name: String, _ problem: String) -> PolicyError { PolicyError(file: file, key: "\(key)[\(index)].\(name)", problem: problem) }
            guard let versions = VersionRange(entry.versions ?? "*") else {
                throw refuse("versions", "must be *, a version (2.1) or a comparison with dotted numbers (< 2.0, <= 1.4, >= 3, > 1)")
            }
            guard let status = RemoteDisable.Status(rawValue: entry.status) else { throw refuse("status", "must be active, notify or disabled") }
            let message = entry.message ?? ""
            if status != .active, message.trimmingCharacters(in: .whitespaces).isEmpty {
                throw refuse("message", "is required with status \(status.rawValue): it is what the user is shown")
            }
            if let link = entry.downloadLink {
                guard let url = URL(string: link), let scheme = url.scheme?.lowercased(), ["https", "http", "itms-apps", "market"].contains(scheme) else {
                    throw refuse("downloadLink", "must be an https (or itms-apps:, market:) URL")
                }
            }
            rules.append(.init(versions: versions, status: status, message: message, messages: entry.messages ?? [:], downloadLink: entry.downloadLink))
        }
        return RemoteDisable(rules: rules)
    }

    /// How a confidential client authenticates: its secret's hash, or its certificate (RFC 8705), each only with its
    /// method and every key of the method required.
    static func authentication(of entry: PolicyFile.ConfidentialClientEntry, key: String, file: String) throws
        -> (secretHash: String?, certificate: CertificateAuthentication?)
    {
        func refuse(_ name: String, _ problem: String) -> PolicyError { PolicyError(file: file, key: "\(key).\(name)", problem: problem) }
        let method = entry.tokenEndpointAuthMethod ?? "client_secret_basic"
        let certificateKeys = [("tlsClientAuthSubjectDN", entry.tlsClientAuthSubjectDN), ("certificateSHA256", entry.certificateSHA256)]
        switch method {
        case "client_secret_basic":
            if let (name, _) = certificateKeys.first(where: { $0.1 != nil }) {
                throw refuse(name, "goes with tokenEndpointAuthMethod tls_client_auth or self_signed_tls_client_auth")
            }
            guard let secretHash = entry.secretHash.flatMap(PasswordVerifier.usableBcryptHash) else {
                throw refuse("secretHash", "must be a whole bcrypt hash ($2b$12$ and 53 more characters: `gatehouse hash-password`), never a secret")
            }
            if let problem = PasswordVerifier.costProblem(of: secretHash) { throw refuse("secretHash", problem) }
            return (secretHash, nil)
        case "tls_client_auth", "self_signed_tls_client_auth":
            if entry.secretHash != nil { throw refuse("secretHash", "has no use with tokenEndpointAuthMethod \(method): the certificate authenticates the client") }
            if method == "tls_client_auth" {
                if entry.certificateSHA256 != nil { throw refuse("certificateSHA256", "goes with self_signed_tls_client_auth") }
                guard let subject = entry.tlsClientAuthSubjectDN, subject.contains("=") else {
                    throw refuse("tlsClientAuthSubjectDN", "is required: the certificate's subject as RFC 4514 writes it, e.g. CN=balance-service,O=Example Bank")
                }
                return (nil, .subject(subject))
            }
            if entry.tlsClientAuthSubjectDN != nil { throw refuse("tlsClientAuthSubjectDN", "goes with tls_client_auth") }
            guard let thumbprint = entry.certificateSHA256, CertificateThumbprint.isWellFormed(thumbprint) else {
                throw refuse("certificateSHA256", "is required: the certificate's base64url SHA-256 (43 characters; README, \"Clients with certificates\")")
            }
            return (nil, .thumbprint(thumbprint))
        default:
            throw refuse("tokenEndpointAuthMethod", "must be client_secret_basic, tls_client_auth or self_signed_tls_client_auth")
        }
    }
}
