import Foundation
import GatehouseProtocol
import NIOHTTP1

/// A server policy with admin clients, and calls of the admin API.
enum Admin {
    /// The standard test policy plus `ops` (`gatehouse.admin`) and `ops-viewer` (`gatehouse.admin.read`), both with
    /// secret `s3cret` (bcrypt cost 4: test data only), and a lockout after 3 failures.
    static let policy = TestPolicies.standard
        .replacingOccurrences(of: "confidentialClients:\n", with: """
            confidentialClients:
              - { id: ops, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "gatehouse.admin gatehouse.admin.read" }
              - { id: ops-viewer, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "gatehouse.admin.read" }

            """)
        + "\naccountLockout: { threshold: 3, windowSec: 900, durationSec: 300 }\n"

    /// A client-credentials token.
    static func token(_ server: TestServer, client: String, secret: String = "s3cret", scope: String) async throws -> String {
        let response = try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/token", [("grant_type", "client_credentials"), ("scope", scope)],
                                               headers: [("Authorization", "Basic " + Data("\(client):\(secret)".utf8).base64EncodedString())])
        guard response.status == 200 else { throw TestFailure("token for \(client): \(response.status)") }
        return try response.decode(TokenResponse.self).access_token
    }

    static func writer(_ server: TestServer) async throws -> String { try await token(server, client: "ops", scope: "gatehouse.admin") }
    static func reader(_ server: TestServer) async throws -> String { try await token(server, client: "ops-viewer", scope: "gatehouse.admin.read") }

    /// An admin request with a bearer token (none when `nil`).
    static func send(_ method: HTTPMethod, _ server: TestServer, _ path: String, token: String?) async throws -> TestResponse {
        try await HTTP.send(method, server.baseURL + "/admin/v1" + path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }
}
