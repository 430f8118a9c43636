import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging

/// Logout from one check, and heartbeat.
extension AuthorizationService {
    /// `preauth/v1/logout`: logs the client out of one check.
    public func logout(form: [String: String]) async throws {
        guard let name = form["security_check"], !name.isEmpty else { throw GatehouseError.invalidRequest("security_check is required") }
        let record = try await assertions.verify(form: form, audience: .logout, jti: nil, now: EpochTime.nowMillis(), style: .mobileFirst)
        let application = try application(for: record.data)
        guard let check = application.checks[name] else {
            throw GatehouseError(.badRequest, "INVALID_SECURITY_CHECK", "Unknown security check '\(name.prefix(64))'.")
        }
        try await withClient(record) { snapshot in try await snapshot.logout(check) }
    }

    /// `preauth/v1/heartbeat`: records the client's activity.
    public func heartbeat(form: [String: String]) async throws {
        let record = try await assertions.verify(form: form, audience: .heartbeat, jti: nil, now: EpochTime.nowMillis(), style: .mobileFirst)
        try await withClient(record) { _ in }
    }
}
