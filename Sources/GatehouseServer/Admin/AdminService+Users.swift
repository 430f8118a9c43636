import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// Users and their second factors for operators (`/admin/v1/users/{username}`): what a user enrolled (a TOTP
/// secret: when, how many recovery codes are left — never the secret or the codes), and a factor reset when a phone
/// is lost: the user enrols again at the next login. Every reset is audited.
extension AdminService {
    /// A user of the store (the policy's users) and the factors enrolled; `404` when neither exists.
    func user(_ username: String) async throws -> JSON {
        let record = try await store.user(named: username)
        let factors = try await store.userFactors(username: username)
        guard record != nil || !factors.isEmpty else {
            throw AdminError.notFound("No user is called '\(username.prefix(128))'.")
        }
        var result: JSONObject = [
            "username": .string(username), "displayName": .string(record?.displayName ?? username),
            "factors": .array(factors.map(Self.json)),
        ]
        if record == nil { result["removedFromPolicy"] = true }
        return .object(result)
    }

    /// What is shown of an enrolled factor: its check, when, and how many recovery codes are left (when it has them).
    static func json(_ factor: UserFactorRecord) -> JSON {
        var result: JSONObject = ["factor": .string(factor.factor), "enrolledAt": .int(factor.enrolledAt)]
        if let data = try? JSONDecoder().decode(JSON.self, from: Data(factor.data.utf8)), let codes = data["recoveryCodes"]?.arrayValue {
            result["recoveryCodesLeft"] = .int(Int64(codes.count))
        }
        return .object(result)
    }

    /// Forgets `username`'s factor `factor` (a lost phone): the next login enrols a new secret. The user's wrong
    /// codes are forgotten too (its `totp:<name>` account unlocked).
    func resetFactor(_ username: String, factor: String, actor: String, address: String?) async throws -> JSON {
        guard try await store.deleteUserFactors(username: username, factor: factor) > 0 else {
            throw AdminError.notFound("User '\(username.prefix(128))' has no factor '\(factor.prefix(64))' enrolled.")
        }
        let account = TOTP.account(username)
        try await store.deleteAccountFailures(account)
        service.policyWatcher.compiler.knownLockouts.forget(account)
        service.audit.record("admin.user.factor.reset", user: username, check: factor, address: address, actor: actor)
        return ["reset": .string(factor), "username": .string(username)]
    }
}
