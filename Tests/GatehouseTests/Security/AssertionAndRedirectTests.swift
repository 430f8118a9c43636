import Foundation
import GatehouseProtocol
import GatehouseSQLite
import Testing

/// Trust at the runtime endpoints: client assertions bound to their endpoint and used once, `redirect_uri`
/// required at the token endpoint, data files the owner's only.
@Suite(.timeLimit(.minutes(3))) struct AssertionAndRedirectTests {
    static func form(_ assertion: String, _ extra: [(String, String)] = []) -> [(String, String)] {
        [("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", assertion)] + extra
    }

    @Test func anAssertionWorksOnceAndOnlyAtItsEndpoint() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let api = client.api
            // aud null (what MobileFirst clients send): accepted once.
            let beat = try client.assertion(jti: nil, aud: nil)
            #expect(try await HTTP.postForm(api + "/preauth/v1/heartbeat", Self.form(beat)).status == 200)
            let replayed = try await HTTP.postForm(api + "/preauth/v1/heartbeat", Self.form(beat))
            #expect(replayed.status == 401)
            #expect(replayed.json?["errorMsg"]?.stringValue?.contains("used already") == true)
            // Nor at another endpoint.
            #expect(try await HTTP.postForm(api + "/preauth/v1/logout", Self.form(beat, [("security_check", "PinCodeAttempts")])).status == 401)
            // An aud naming another endpoint is refused; naming this one is accepted.
            let forLogout = try client.assertion(jti: nil, aud: "preauth/v1/logout")
            #expect(try await HTTP.postForm(api + "/preauth/v1/heartbeat", Self.form(forLogout)).status == 401)
            let forHeartbeat = try client.assertion(jti: nil, aud: server.baseURL + "/mfp/api/preauth/v1/heartbeat")
            #expect(try await HTTP.postForm(api + "/preauth/v1/heartbeat", Self.form(forHeartbeat)).status == 200)
            // Registration reads: once per assertion.
            let id = try #require(client.clientID)
            let read = try client.assertion(jti: nil, aud: nil)
            let query = HTTP.formEncode(Self.form(read))
            #expect(try await HTTP.send(.GET, api + "/registration/v1/self/\(id)?" + query).status == 200)
            #expect(try await HTTP.send(.GET, api + "/registration/v1/self/\(id)?" + query).status == 401)
        }
    }

    @Test func theTokenEndpointRequiresTheAuthorizationRedirectURI() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let authorization = try await client.authorize(scope: nil)
            let code = try #require(ProtocolClient.code(from: authorization))
            let missing = try await HTTP.postForm(client.api + "/az/v1/token", [
                ("grant_type", "authorization_code"), ("code", code),
                ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", try client.assertion(jti: code)),
            ])
            #expect(missing.status == 400)
            #expect(missing.json?["error"] == "invalid_grant")
            // The code was consumed by the refused attempt (single use): a new one with the right redirect works.
            let again = try await client.authorize(scope: nil)
            let second = try #require(ProtocolClient.code(from: again))
            #expect(try await client.token(code: second).status == 200)
        }
    }

    @Test func theDataFolderAndDatabaseAreTheOwnersOnly() async throws {
        let directory = TestServer.temporaryDirectory() + "/nested/data"
        try await TestServer.run(dataDirectory: directory) { _ in
            func mode(_ path: String) throws -> Int {
                (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
            }
            let database = try mode(directory + "/gatehouse.sqlite")
            let wal = try mode(directory + "/gatehouse.sqlite-wal")
            #expect(database & 0o077 == 0)
            #expect(wal & 0o077 == 0)
        }
        try SQLiteStore.createDataDirectory(directory + "-fresh")
        let fresh = try FileManager.default.attributesOfItem(atPath: directory + "-fresh")[.posixPermissions] as? NSNumber
        #expect(fresh?.intValue == 0o700)
    }
}
