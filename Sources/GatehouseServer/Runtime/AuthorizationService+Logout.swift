import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging

/// Logout from one check, and heartbeat.
extension AuthorizationService {
    /// `preauth/v1/logout`: logs the client that signed `assertion` out of the check named `securityCheck`.
    ///
    /// - Throws: ``AuthorizationError`` for a request refused.
    public func logout(securityCheck name: String?, assertion: ClientAssertion) async throws {
        guard let name, !name.isEmpty else { throw AuthorizationError.invalidRequest("security_check is required") }
        let record = try await assertions.verify(assertion, audience: .logout, jti: nil, now: EpochTime.nowMillis())
        let application = try application(for: record.data)
        guard let check = application.checks[name] else { throw AuthorizationError.unknownSecurityCheck(name) }
        try await withClient(record) { snapshot in try await snapshot.logout(check) }
    }

    /// `preauth/v1/heartbeat`: records the activity of the client that signed `assertion`.
    ///
    /// - Throws: ``AuthorizationError`` for an assertion refused.
    public func heartbeat(assertion: ClientAssertion) async throws {
        let record = try await assertions.verify(assertion, audience: .heartbeat, jti: nil, now: EpochTime.nowMillis())
        try await withClient(record) { _ in }
    }
}
