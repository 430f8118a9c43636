import Foundation
import GatehouseClient
import GatehouseProtocol
import GatehouseSQLite
import GatehouseStore
import Testing

/// Hostile input round 2, finding 7: `preauthorize` trusted the client id alone, so anyone who knew it (it is in
/// every token) could answer the client's challenges — log it in as another user, or burn its PIN attempts. An
/// application may now require every round to carry a proof signed by the client's registered key
/// (`requireProofOfPossession`, RFC 9449's DPoP shape); the Swift SDK sends it; MobileFirst's own SDKs keep working
/// where it is not required.
@Suite(.timeLimit(.minutes(3))) struct ProofOfPossessionTests {
    static let policy = TestPolicies.standard.replacingOccurrences(of: "applications:\n", with: """
        applications:
          - { id: com.sample.bound, platform: ios, requireProofOfPossession: true, scopeElementMapping: { accessRestricted: PinCodeAttempts } }

        """)

    static func registered(_ server: TestServer) async throws -> ProtocolClient {
        var client = try ProtocolClient(server, app: "com.sample.bound")
        try await client.register()
        return client
    }

    @Test func aStrangerWhoKnowsTheClientIDCannotBurnItsAttempts() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let victim = try await Self.registered(server)
            var stranger = try ProtocolClient(server, app: "com.sample.bound")
            stranger.adopt(clientID: try #require(victim.clientID))
            let wrong: [String: JSON] = ["PinCodeAttempts": ["pin": "0000"]]
            // Without a proof: refused before any check runs, saying why.
            let bare = try await stranger.preauthorize(scope: "accessRestricted", answers: wrong)
            #expect(bare.status == 401)
            #expect(bare.header("WWW-Authenticate")?.hasPrefix("DPoP error=\"invalid_dpop_proof\"") == true)
            #expect(bare.json?["errorCode"] == "INVALID_PROOF")
            // With a proof signed by the stranger's own key (naming the victim): refused.
            for _ in 0..<3 {
                let forged = try await stranger.preauthorize(scope: "accessRestricted", answers: wrong, proof: try stranger.proof())
                #expect(forged.status == 401)
                #expect(forged.json?["errorMsg"]?.stringValue?.contains("registered key") == true, "\(forged.json ?? nil)")
            }
            // The victim's attempts are all there, and its own proof works.
            let challenge = try await victim.preauthorize(scope: "accessRestricted", proof: try victim.proof())
            #expect(challenge.status == 401)
            #expect(challenge.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 3)
            let answered = try await victim.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]], proof: try victim.proof())
            #expect(answered.status == 200)
        }
    }

    /// A blocked device is said so only to the client that proves it is that client: a stranger who knows the
    /// client id gets the proof's refusal, not the device's status.
    @Test func aBlockedDeviceIsToldOnlyToWhoProvesItIsTheClient() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let victim = try await Self.registered(server)
            let store = try SQLiteStore(path: server.dataDirectory + "/gatehouse.sqlite")
            try await store.saveDeviceAccess(DeviceAccessRecord(deviceID: victim.device, status: .stolen, updatedAt: EpochTime.nowMillis()))
            var stranger = try ProtocolClient(server, app: "com.sample.bound")
            stranger.adopt(clientID: try #require(victim.clientID))
            let bare = try await stranger.preauthorize(scope: "accessRestricted")
            #expect(bare.status == 401 && bare.json?["errorCode"] == "INVALID_PROOF", "\(String(decoding: bare.body, as: UTF8.self))")
            #expect(!String(decoding: bare.body, as: UTF8.self).contains("STOLEN"))
            let proven = try await victim.preauthorize(scope: "accessRestricted", proof: try victim.proof())
            #expect(proven.status == 403 && proven.json?["failures"]?[DeviceAccessWire.failureName]?["status"] == "STOLEN")
        }
    }

    @Test func aProofCountsOnceForItsOwnRequestAndTime() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let client = try await Self.registered(server)
            func status(_ proof: String) async throws -> (Int, String) {
                let answer = try await client.preauthorize(scope: "accessRestricted", proof: proof)
                return (answer.status, answer.json?["errorMsg"]?.stringValue ?? "")
            }
            let proof = try client.proof()
            let first = try await status(proof)
            #expect(first.0 == 401 && first.1.isEmpty, "the round ran: the PIN challenge, no error")
            #expect(try await status(proof).1.contains("used already"))
            #expect(try await status(try client.proof(method: "GET")).1.contains("another request"))
            #expect(try await status(try client.proof(htu: server.baseURL + "/mfp/api/az/v1/token")).1.contains("another request"))
            #expect(try await status(try client.proof(iat: Int64(Date().timeIntervalSince1970) - 600)).1.contains("validity window"))
            // A client assertion (no typ dpop+jwt) is not a proof, though signed by the right key.
            let assertion = try JWS.sign(ClientAssertionClaims(iss: nil, sub: client.clientID, aud: nil, iat: 0, exp: 0, jti: "x"), with: client.key,
                                         kid: client.clientID).compact
            #expect(try await status(assertion).1.contains("typ"))
            #expect(try await status("not a jws").1.contains("not a JWS"))
            // A fresh proof of the client's own: the round runs (the PIN challenge).
            #expect(try await status(try client.proof()).0 == 401)
            let challenge = try await client.preauthorize(scope: "accessRestricted", proof: try client.proof())
            #expect(challenge.json?["challenges"]?["PinCodeAttempts"] != nil)
        }
    }

    /// The Swift SDK proves every round: its token flow is unchanged for an application that requires proofs. An
    /// application that does not ignores the field (the standard policy's apps, and the web SDK's in the browser test).
    @Test func theSwiftSDKProvesItsRounds() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, app: "com.sample.bound", transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            let token = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(token.scope == "RegisteredClient accessRestricted")
            #expect(challenges.count == 1)
            let rounds = transport.requests(to: "/preauth/v1/preauthorize")
            #expect(rounds.count == 2)
            let proofs = rounds.compactMap { $0.header(ProofOfPossession.field) }
            #expect(proofs.count == 2 && Set(proofs).count == 2, "a fresh proof each round")
            #expect(SDK.header(ofJWS: proofs[0])?["typ"] == "dpop+jwt")

            let other = SDK.client(server)
            try other.registerChallengeHandler(SDK.pinHandler(Calls<JSONObject>()))
            _ = try await other.obtainAccessToken(forScope: "accessRestricted")
        }
    }
}
