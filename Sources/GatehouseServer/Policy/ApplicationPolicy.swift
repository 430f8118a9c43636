public import GatehouseChecks
public import GatehouseProtocol

/// One application's security policy: its checks (configured for it), scope mapping, mandatory scope and token cap.
public struct ApplicationPolicy: Sendable {
    public let id: String
    public let platform: String
    public let version: String?
    /// Scope element → check names.
    public let scopeElementMapping: [String: [String]]
    public let mandatoryScope: Set<String>
    /// Seconds.
    public let maxTokenExpiration: Int
    /// The checks, configured for this application, by name.
    public let checks: [String: any SecurityCheck]
    /// The shortest RSA client key accepted, bits (2048 unless lowered for a legacy app).
    public var minimumClientKeyBits: Int = ClientSignature.defaultMinimumBits
    /// Whether every pre-authorization round must carry a proof of possession of the client's key
    /// (``ProofOfPossession``).
    public var requireProofOfPossession = false
    /// Origins whose web pages may call the runtime API for this application (CORS), lowercased.
    public var allowedOrigins: Set<String> = []
    /// The `acr` values the checks prove, and their levels.
    public var authenticationContexts = AuthenticationContexts()
    /// Check → the checks that must succeed before it runs in a round (`requires` in the policy); acyclic.
    public var dependencies: [String: [String]] = [:]
    /// The status of the application's versions (remote disable, administrator messages), if the policy sets any.
    public var remoteDisable: RemoteDisable?

    /// Whether a client registering `application` belongs to this policy.
    public func matches(_ application: ApplicationData) -> Bool {
        application.id == id && application.clientPlatform.lowercased() == platform.lowercased()
            && (version == nil || version == application.version)
    }

    /// A scope element no check answers for.
    public struct UnknownScopeElement: Error, Sendable {
        public let element: String
    }

    /// The checks that `scope` and the mandatory scope map to, each with the scope elements that mapped to it; first,
    /// for a client of a version that is notified or disabled (`version`: the registered one), ``RemoteDisable``,
    /// whatever the scope.
    public func checks(for scope: Scope, version: String?, includingMandatory: Bool = true) throws(UnknownScopeElement)
        -> [(check: any SecurityCheck, scope: Set<String>)]
    {
        let mapped = try checks(for: scope, includingMandatory: includingMandatory)
        guard let remoteDisable, remoteDisable.applies(to: version) else { return mapped }
        return [(check: remoteDisable as any SecurityCheck, scope: Set<String>())] + mapped
    }

    /// The checks that `scope` and the mandatory scope map to, each with the scope elements that mapped to it, and
    /// the checks those require (with the same elements): every check after the checks it requires, otherwise in
    /// name order.
    public func checks(for scope: Scope, includingMandatory: Bool = true) throws(UnknownScopeElement) -> [(check: any SecurityCheck, scope: Set<String>)] {
        var elementsByCheck: [String: Set<String>] = [:]
        let elements = includingMandatory ? scope.elements.union(mandatoryScope) : scope.elements
        for element in elements where element != Scope.registeredClient {
            let names = scopeElementMapping[element] ?? [element]
            for name in names {
                guard checks[name] != nil else { throw UnknownScopeElement(element: element) }
                elementsByCheck[name, default: []].insert(element)
            }
        }
        guard !dependencies.isEmpty else { return elementsByCheck.keys.sorted().map { (checks[$0]!, elementsByCheck[$0]!) } }
        var ordered: [String] = []
        var placed: Set<String> = []
        // The policy refused cycles, so the walk ends; a required check gets the elements of the checks needing it.
        func place(_ name: String, for elements: Set<String>) {
            for required in dependencies[name] ?? [] where checks[required] != nil {
                elementsByCheck[required, default: []].formUnion(elements)
                place(required, for: elements)
            }
            if placed.insert(name).inserted { ordered.append(name) }
        }
        for name in elementsByCheck.keys.sorted() { place(name, for: elementsByCheck[name]!) }
        return ordered.map { (checks[$0]!, elementsByCheck[$0]!) }
    }
}

/// Authentication context classes (RFC 9470's `acr`): what each check's success proves, and the levels that rank
/// them (the policy's `authenticationContexts`, as Keycloak maps ACR values to levels of assurance).
public struct AuthenticationContexts: Sendable, Equatable {
    /// `acr` value → level.
    public var levels: [String: Int] = [:]
    /// Check name → the `acr` its success proves.
    public var checks: [String: String] = [:]

    public init(levels: [String: Int] = [:], checks: [String: String] = [:]) {
        self.levels = levels
        self.checks = checks
    }

    /// The `acr` of a token the success of `checks` granted: the highest level among theirs (the first in name
    /// order on a tie); `nil` when none declares one.
    public func acr(of checks: [String]) -> String? {
        var best: (value: String, level: Int)?
        for name in checks.sorted() {
            guard let value = self.checks[name], let level = levels[value] else { continue }
            if best == nil || level > best!.level { best = (value, level) }
        }
        return best?.value
    }
}
