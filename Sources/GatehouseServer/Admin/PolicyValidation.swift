import GatehouseChecks
import GatehouseProtocol

extension AdminService {
    /// Checks a policy (YAML) as `gatehouse serve` would at start, changing nothing:
    /// `{"valid":true,"warnings":[...]}` or `{"valid":false,"errors":[{"file","key","problem"}],"warnings":[]}`.
    func validatePolicy(yaml: String) -> JSON {
        let file = "policy.yaml"
        do {
            let decoded = try SecurityPolicy.decode(yaml: yaml, file: file)
            _ = try SecurityPolicy.accountLockout(of: decoded, file: file)
            let policy = try SecurityPolicy.build(decoded, file: file, registry: registry, services: SecurityCheckServices(users: store))
            return ["valid": true, "errors": [], "warnings": .array(policy.warnings.map { .string($0) })]
        } catch let error as PolicyError {
            return ["valid": false, "errors": [["file": .string(error.file), "key": .string(error.key), "problem": .string(error.problem)]],
                    "warnings": []]
        } catch {
            return ["valid": false, "errors": [["file": .string(file), "key": "", "problem": "The policy cannot be read."]], "warnings": []]
        }
    }
}
