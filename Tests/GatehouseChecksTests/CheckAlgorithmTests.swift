import Foundation
import GatehouseChecks
import GatehouseProtocol
import Testing

/// The exact algorithms of reference §1.3–1.4, with explicit times.
@Suite(.timeLimit(.minutes(3))) struct CheckAlgorithmTests {
    @Test func settingTheLiveStateAgainKeepsItsTimer() throws {
        var machine = ExternalizableState()
        let durations = ["success": 10]
        #expect(machine.state(durations: durations, now: 0) == "expired")
        try machine.setState("success", durations: durations, now: 1_000)
        try machine.setState("success", durations: durations, now: 5_000)
        #expect(machine.expiresAt(durations: durations) == 11_000)
        #expect(machine.state(durations: durations, now: 10_999) == "success")
        #expect(machine.state(durations: durations, now: 11_000) == "expired")
        try machine.setState("success", durations: durations, now: 12_000)
        #expect(machine.expiresAt(durations: durations) == 22_000)
        #expect(throws: ExternalizableState.UnsupportedState.self) { try machine.setState("other", durations: durations, now: 0) }
    }

    @Test func anyChangeOfStateResetsTheAttemptCounter() {
        let config = CredentialsValidationConfiguration(maxAttempts: 3, blockedStateExpirationSec: 5)
        var state = CredentialsValidationState<NoCheckData>()
        state.setState("attempting", config, now: 0)
        state.usedAttempts = 2
        #expect(state.remainingAttempts(config) == 1)
        state.setState("attempting", config, now: 1)
        #expect(state.usedAttempts == 0)
        // An attempting state with no attempts left (after a configuration change) reads as blocked.
        state.usedAttempts = 3
        #expect(state.state(config, now: 2) == "blocked")
    }

    @Test func theAttemptingWindowExpires() async throws {
        var properties = SecurityCheckProperties(["maxAttempts": 3, "attemptingStateExpirationSec": 1])
        let check = PinCodeAttempts(name: "Pin", properties: &properties)
        var state = check.makeState()
        var client = ClientContext(clientID: "c", application: .init(id: "a", clientPlatform: "ios", version: "1"), device: .init(id: "d"), now: 0)
        var response = AuthorizationResponse()
        try await check.authorize(scope: ["s"], credentials: ["pin": "0"], request: CheckRequest(), state: &state, client: &client, response: &response)
        #expect(response.challenges["Pin"] == ["errorMsg": "The pin code is not valid.", "remainingAttempts": 2])
        // 1 s later the attempting window is over: attempts start again.
        client = ClientContext(clientID: "c", application: client.application, device: client.device, now: 1_000)
        response = AuthorizationResponse()
        try await check.authorize(scope: ["s"], credentials: nil, request: CheckRequest(), state: &state, client: &client, response: &response)
        #expect(response.challenges["Pin"] == ["errorMsg": nil, "remainingAttempts": 3])
    }

    @Test func scopesNormalise() {
        #expect(Scope("sc2 sc1").normalized == "RegisteredClient sc1 sc2")
        #expect(Scope(nil) == Scope("RegisteredClient"))
        #expect(Scope("  b  a RegisteredClient ") == Scope("a b"))
        #expect(Scope("a\tb\nc") == Scope(elements: ["a", "b", "c"]))
        // Characters, not bytes, where they differ: `\r\n` and a blank with a combining mark separate nothing.
        #expect(Scope("a\r\nb") == Scope(elements: ["a\r\nb"]))
        #expect(Scope("a \u{301}b é") == Scope(elements: ["a \u{301}b", "é"]))
    }

    @Test func jwsRoundTripAndTampering() throws {
        let key = try ClientKeyPair()
        let jws = try JWS.sign(["hello": "world"] as JSON, with: key, kid: "c1")
        let header = try jws.decodedHeader()
        #expect(header.alg == "RS256")
        #expect(header.jwk?.kid == "c1")
        try jws.verify(with: try key.jwk())
        var tampered = jws
        tampered.payload = Base64URL.encode(Data("{\"hello\":\"mars\"}".utf8))
        #expect(throws: JWSError.badSignature) { try tampered.verify(with: try key.jwk()) }
        #expect(throws: JWSError.badSignature) { try jws.verify(with: try ClientKeyPair().jwk()) }
        // Standard base64 with padding, as the MobileFirst web SDK sends, decodes too.
        #expect(Base64URL.decode("aGk+Pz8=") == Data("hi>??".utf8))
        #expect(ConstantTime.equals("1234", "1234"))
        #expect(!ConstantTime.equals("1234", "1235"))
    }
}
