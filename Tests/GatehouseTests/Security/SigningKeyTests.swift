import Foundation
import GatehousePostgres
import GatehouseProtocol
import GatehouseSQLite
import GatehouseServer
import Testing

/// Keys and discovery: the JWKS follows keys rotated or retired on another node without a restart, a retired
/// key's tokens stop verifying (a leaked key stops working), and the RFC 8414 `issuer` is the tokens' `iss`.
@Suite(.timeLimit(.minutes(3))) struct SigningKeyTests {
    static func kids(_ server: TestServer) async throws -> [String] {
        let jwks = try await HTTP.send(.GET, server.baseURL + "/.well-known/jwks.json")
        return jwks.json?["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } ?? []
    }

    static func keysCommand(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runOffThePool(GatehouseProcess.executable.path, ["keys"] + arguments)
    }

    static func balance(_ server: TestServer, _ token: String) async throws -> Int {
        try await HTTP.send(.GET, server.baseURL + "/mfp/api/adapters/ResourceAdapter/balance", headers: [("Authorization", "Bearer " + token)]).status
    }

    @Test func rotationAndRetirementByCommandReachEveryNodeWithoutARestart() async throws {
        try await NodeCluster.run { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            let database = TestPostgres.url(of: cluster.location)
            var client = try ProtocolClient(a)
            try await client.register()
            _ = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            let first = try await client.obtainToken(scope: "accessRestricted")
            let firstKID = try #require(MultiNodeTests.kid(of: first.access_token))
            #expect(try await Self.kids(b) == [firstKID])

            // `gatehouse keys rotate` on the shared database: both nodes' JWKS list the new key at once.
            let rotated = try await Self.keysCommand(["rotate", "--database", database])
            #expect(rotated.status == 0, "\(rotated.output)")
            try await Task.sleep(for: .seconds(2.1))   // the JWKS re-reads a store older than 2 s
            let both = try await Self.kids(b)
            #expect(both.count == 2 && both.first == firstKID)
            #expect(try await Self.kids(a) == both)
            let listed = try await Self.keysCommand(["list", "--database", database])
            #expect(listed.output.contains("\(both[1])  ES256") && listed.output.contains("current"))

            // The current key cannot be retired; the old one can: its tokens stop verifying on every node,
            // including those already verified and cached, and it leaves the JWKS.
            #expect(try await Self.keysCommand(["retire", both[1], "--database", database]).status != 0)
            #expect(try await Self.balance(b, first.access_token) == 200)   // cached on B now
            let retired = try await Self.keysCommand(["retire", firstKID, "--database", database])
            #expect(retired.status == 0, "\(retired.output)")
            try await Task.sleep(for: .seconds(2.1))
            #expect(try await Self.kids(a) == [both[1]])
            #expect(try await Self.kids(b) == [both[1]])
            #expect(try await Self.balance(a, first.access_token) == 401)
            #expect(try await Self.balance(b, first.access_token) == 401)
            // New tokens are signed with the new key and work.
            client.move(to: b)
            let second = try await client.obtainToken(scope: "accessRestricted")
            #expect(MultiNodeTests.kid(of: second.access_token) == both[1])
            #expect(try await Self.balance(a, second.access_token) == 200)
        }
    }

    @Test func keysOlderThanTheMaxAgeRetireThemselves() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/gatehouse.sqlite")
        let old = try await TokenSigner.load(from: store, refreshInterval: nil)
        let oldKID = old.currentKID
        // Backdate the first key by two days, then rotate: with a one-day max age, the old key is retired.
        var records = try await store.signingKeys()
        records[0].createdAt -= 2 * 86_400_000
        try await store.updateSigningKey(records[0])
        try await TokenSigner.rotate(in: store)
        let signer = try await TokenSigner.load(from: store, refreshInterval: nil, maxKeyAge: .seconds(86_400))
        #expect(signer.isRetired(oldKID))
        #expect(signer.kids == [signer.currentKID])
        let jwks = await signer.currentJWKS()
        #expect(jwks["keys"]?.arrayValue?.count == 1)
        // Without a max age, both verify.
        let keeping = try await TokenSigner.load(from: store, refreshInterval: nil)
        #expect(keeping.kids.count == 2)
    }

    @Test func theMetadataIssuerIsTheTokensIss() async throws {
        try await TestServer.run(issuer: "https://auth.example.test/") { server in
            let metadata = try await HTTP.send(.GET, server.baseURL + "/.well-known/oauth-authorization-server")
            #expect(metadata.json?["issuer"] == "https://auth.example.test")
            #expect(metadata.json?["token_endpoint"] == "https://auth.example.test/mfp/api/az/v1/token")
            var client = try ProtocolClient(server)
            try await client.register()
            let token = try await client.obtainToken(scope: nil)
            let payload = try #require(token.access_token.split(separator: ".").dropFirst().first)
            let claims = try JSONDecoder().decode(JSON.self, from: try #require(Base64URL.decode(payload)))
            #expect(claims["iss"] == metadata.json?["issuer"])
        }
    }
}
