@testable import GatehouseChecks
import Foundation
import Testing

/// Hostile input round 2, finding 8 (in part): a wrong secret for a confidential client whose secret the node
/// remembered was refused from memory (4 ms), an unknown client's after a decoy bcrypt run (97 ms): the answer's
/// time told which client ids exist. Now both run bcrypt. (Runs in the serial pass: it counts the process's runs.)
@Suite(.timeLimit(.minutes(3))) struct EnumerationTimingTests {
    static func tokenRequest(_ server: TestServer, client: String, secret: String) async throws -> Int {
        try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/token", [("grant_type", "client_credentials"), ("scope", "gatehouse.admin.read")],
                                headers: [("Authorization", "Basic " + Data("\(client):\(secret)".utf8).base64EncodedString())]).status
    }

    @Test func aWrongSecretCostsABcryptRunForKnownAndUnknownClientsAlike() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            _ = try await Admin.reader(server)  // ops-viewer's secret is now remembered
            for client in ["ops-viewer", "nobody-at-all"] {
                let before = PasswordVerifier.flights.runCount
                #expect(try await Self.tokenRequest(server, client: client, secret: "wrong") == 401)
                #expect(PasswordVerifier.flights.runCount == before + 1, "\(client)")
            }
        }
    }
}
