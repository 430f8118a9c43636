import GatehouseChecks
import GatehouseProtocol

/// What an operator sees of a client's check: its state, attempts and expiry — never the state's own data (a
/// captcha's answer, a user's data).
extension ClientSnapshot {
    func view(of check: any SecurityCheck) -> JSON {
        if let validating = check as? any CredentialsValidationSecurityCheck { return validatingView(of: validating) }
        return genericView(of: check)
    }

    private func genericView<C: SecurityCheck>(of check: C) -> JSON {
        let expiresAt = check.expiresAt(state: state(of: check))
        return ["check": .string(check.name), "state": expiresAt > context.now ? "active" : "expired", "expiresAt": .int(expiresAt)]
    }

    private func validatingView<C: CredentialsValidationSecurityCheck>(of check: C) -> JSON {
        var state = state(of: check)
        let name = state.state(check.validation, now: context.now)
        let expiresAt = name == ExternalizableState.expired ? 0 : state.machine.expiresAt(durations: check.validation.durations)
        return [
            "check": .string(check.name), "state": .string(name), "expiresAt": .int(expiresAt),
            "maxAttempts": .int(Int64(check.validation.maxAttempts)),
            // The count starts anew at each change of state: a blocked client has none left until the block ends.
            "remainingAttempts": .int(name == CredentialsValidationState<C.CheckData>.blocked ? 0 : Int64(state.remainingAttempts(check.validation))),
        ]
    }
}
