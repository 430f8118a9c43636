import GatehouseChecks
import GatehouseProtocol

extension AdminService {
    /// The policy in force (never a secret: no check properties, which hold PINs, no hashes).
    func policy() -> JSON {
        let policy = service.policy
        var result: JSONObject = [
            "applications": .array(policy.applications.map { app in
                [
                    "id": .string(app.id), "platform": .string(app.platform), "version": JSON(app.version),
                    "scopeElementMapping": .object(app.scopeElementMapping.mapValues { .string($0.joined(separator: " ")) }),
                    "mandatoryScope": .string(app.mandatoryScope.sorted().joined(separator: " ")),
                    "maxTokenExpiration": .int(Int64(app.maxTokenExpiration)),
                    "securityChecks": .array(app.checks.values.sorted { $0.name < $1.name }.map { check in
                        var entry: JSONObject = ["name": .string(check.name), "class": .string(String(describing: type(of: check)))]
                        if let validating = check as? any CredentialsValidationSecurityCheck {
                            let validation = validating.validation
                            entry["maxAttempts"] = .int(Int64(validation.maxAttempts))
                            entry["attemptingStateExpirationSec"] = .int(Int64(validation.attemptingStateExpirationSec))
                            entry["successStateExpirationSec"] = .int(Int64(validation.successStateExpirationSec))
                            entry["blockedStateExpirationSec"] = .int(Int64(validation.blockedStateExpirationSec))
                        }
                        return .object(entry)
                    }),
                    "versions": Self.versionRules(of: app),
                ]
            }),
            "confidentialClients": .array(policy.confidentialClients.map {
                ["id": .string($0.id), "displayName": .string($0.displayName), "allowedScope": .string($0.allowedScope.joined(separator: " "))]
            }),
            "accountLockout": [
                "threshold": .int(Int64(policy.accountLockout.threshold)), "windowSec": .int(policy.accountLockout.window / 1000),
                "durationSec": .int(policy.accountLockout.duration / 1000), "growth": .int(Int64(policy.accountLockout.growth)),
                "maxDurationSec": .int(policy.accountLockout.maxDuration / 1000),
            ],
            "sourceThrottle": [
                "threshold": .int(Int64(policy.sourceThrottle.threshold)), "windowSec": .int(policy.sourceThrottle.window / 1000),
                "durationSec": .int(policy.sourceThrottle.duration / 1000), "growth": .int(Int64(policy.sourceThrottle.growth)),
                "maxDurationSec": .int(policy.sourceThrottle.maxDuration / 1000),
            ],
            "users": .array(policy.users.map { .string($0.username) }),
        ]
        if let throttle = policy.registrationThrottle {
            result["registrationThrottle"] = ["perAddress": .int(Int64(throttle.count)), "windowSec": .int(throttle.window / 1000)]
        }
        return .object(result)
    }

    /// Checks a policy (YAML) as `gatehouse serve` would at start, changing nothing:
    /// `{"valid":true,"errors":[],"warnings":[...]}` or `{"valid":false,"errors":[{"file","key","problem"}],"warnings":[]}`.
    func validatePolicy(yaml: String) -> JSON {
        do {
            let snapshot = try service.policyWatcher.compiler.compile(yaml: yaml, file: Self.policyFileName, version: 0)
            return ["valid": true, "errors": [], "warnings": .array(snapshot.policy.warnings.map { .string($0) })]
        } catch {
            return ["valid": false, "errors": [Self.json(error)], "warnings": []]
        }
    }

    /// The name errors give a policy sent to the API.
    static let policyFileName = "policy.yaml"

    static func json(_ error: any Error) -> JSON {
        guard let error = error as? PolicyError else {
            return ["file": .string(policyFileName), "key": "", "problem": "The policy cannot be read."]
        }
        return ["file": .string(error.file), "key": .string(error.key), "problem": .string(error.problem)]
    }

    /// The YAML source of the policy in force and its version, for editing (it holds what the policy holds:
    /// hashes, check properties such as a PIN, so only for the write scope; the read is audited).
    func policySource(actor: String, address: String?) async -> JSON {
        let snapshot = service.policies.current
        service.audit.record("admin.policy.read", address: address, actor: actor, detail: "version \(snapshot.version)")
        return ["version": .int(snapshot.version), "origin": .string(snapshot.origin), "yaml": .string(snapshot.source)]
    }

    /// Applies a policy on this node now and on every node sharing the store within their poll interval:
    /// `{"applied":true,"version":N,"warnings":[...]}`; `422 INVALID_POLICY` with `errors` when it does not compile
    /// (nothing changes), `409 CONFLICT` when another operator applied one at the same moment.
    func applyPolicy(yaml: String, actor: String, address: String?) async throws -> JSON {
        let snapshot: PolicyInForce.Snapshot
        do {
            snapshot = try await service.policyWatcher.apply(yaml: yaml, actor: actor)
        } catch PolicyWatcher.ApplyError.invalid(let error) {
            throw AdminError.invalidPolicy("The policy was not applied: \(error)", errors: [Self.json(error)])
        } catch PolicyWatcher.ApplyError.conflict {
            throw AdminError.conflict("Another policy was applied at the same moment; read the policy again and retry.")
        }
        service.audit.record("admin.policy.apply", address: address, actor: actor, detail: "version \(snapshot.version)")
        return ["applied": true, "version": .int(snapshot.version), "warnings": .array(snapshot.policy.warnings.map { .string($0) })]
    }
}
