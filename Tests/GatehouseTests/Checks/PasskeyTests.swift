import Crypto
import Foundation
@testable import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// A software authenticator: what a phone's platform authenticator sends, made with a P-256 key (CTAP2's CBOR by
/// hand), to drive the Passkey check over the wire. Chromium's own virtual authenticator runs the same check in the
/// browser test.
struct SoftwareAuthenticator {
    let key = P256.Signing.PrivateKey()
    let credentialID: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }
    var rpID = "localhost"
    var origin = "http://localhost:8080"
    var counter: UInt32 = 0

    /// CBOR of the few shapes needed: maps with int or text keys, ints, bytes, text.
    enum Item { case int(Int), bytes([UInt8]), text(String), map([(Item, Item)]) }

    static func cbor(_ item: Item) -> [UInt8] {
        func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
            switch value {
            case 0..<24: [major << 5 | UInt8(value)]
            case 24..<256: [major << 5 | 24, UInt8(value)]
            default: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xff)]
            }
        }
        switch item {
        case .int(let value): return value >= 0 ? head(0, UInt64(value)) : head(1, UInt64(-1 - value))
        case .bytes(let bytes): return head(2, UInt64(bytes.count)) + bytes
        case .text(let text): return head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .map(let entries): return head(5, UInt64(entries.count)) + entries.flatMap { cbor($0.0) + cbor($0.1) }
        }
    }

    var coseKey: [UInt8] {
        let point = Array(key.publicKey.x963Representation)
        return Self.cbor(.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                               (.int(-2), .bytes(Array(point[1..<33]))), (.int(-3), .bytes(Array(point[33..<65])))]))
    }

    func authenticatorData(flags: UInt8, attested: Bool) -> [UInt8] {
        var data = Array(SHA256.hash(data: Data(rpID.utf8)))
        data.append(flags | (attested ? 0x40 : 0))
        data += withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        if attested {
            data += [UInt8](repeating: 0, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + coseKey
        }
        return data
    }

    func clientData(_ type: String, challenge: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    /// The answer to a registration challenge (`none` attestation).
    func register(_ options: JSON?, flags: UInt8 = 0x05) -> JSON {
        let clientData = clientData("webauthn.create", challenge: options?["challenge"]?.stringValue ?? "")
        let attestation = Self.cbor(.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
                                          (.text("authData"), .bytes(authenticatorData(flags: flags, attested: true)))]))
        return ["credential": ["id": .string(Base64URL.encode(credentialID)), "rawId": .string(Base64URL.encode(credentialID)), "type": "public-key",
                               "response": ["clientDataJSON": .string(Base64URL.encode(clientData)), "attestationObject": .string(Base64URL.encode(attestation))]]]
    }

    /// The answer to an authentication challenge, the counter moved on first.
    mutating func signIn(_ options: JSON?, flags: UInt8 = 0x05, step: UInt32 = 1) throws -> JSON {
        counter += step
        let clientData = clientData("webauthn.get", challenge: options?["challenge"]?.stringValue ?? "")
        let data = authenticatorData(flags: flags, attested: false)
        let signature = try key.signature(for: data + Array(SHA256.hash(data: Data(clientData)))).derRepresentation
        return ["credential": ["id": .string(Base64URL.encode(credentialID)), "type": "public-key",
                               "response": ["clientDataJSON": .string(Base64URL.encode(clientData)), "authenticatorData": .string(Base64URL.encode(data)),
                                            "signature": .string(Base64URL.encode(signature))]]]
    }
}

/// The Passkey check after the login: registration and sign-in through its challenges, every refusal of WebAuthn's
/// §7 that matters (origin, challenge, relying party, signature, counter, user verification), malformed answers.
@Suite(.timeLimit(.minutes(3))) struct PasskeyTests {
    static let policy = TOTPTests.policy.replacingOccurrences(of: "applications:\n", with: """
          Passkey:
            class: Passkey
            requires: [UserLogin]
            properties: { rpID: localhost, origins: "http://localhost:8080", userVerification: required, maxAttempts: 5 }
        applications:

        """).replacingOccurrences(of: "transfers: TOTP,", with: "transfers: TOTP, payments: Passkey,")

    static func loggedIn(_ server: TestServer) async throws -> (client: ProtocolClient, challenge: JSON) {
        var client = try ProtocolClient(server, app: "com.sample.bank")
        try await client.register()
        let login = try await client.preauthorize(scope: "payments", answers: ["UserLogin": ["username": "john", "password": "demo"]])
        #expect(login.status == 401, "\(String(decoding: login.body, as: UTF8.self))")
        return (client, try #require(login.json?["challenges"]?["Passkey"]))
    }

    static func answer(_ client: ProtocolClient, _ credential: JSON) async throws -> TestResponse {
        try await client.preauthorize(scope: "payments", answers: ["Passkey": credential])
    }

    @Test func registrationThenSignInWithThePasskey() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var phone = SoftwareAuthenticator()
            let (client, challenge) = try await Self.loggedIn(server)
            let registration = try #require(challenge["registration"])
            #expect(registration["rp"] == ["id": "localhost", "name": "Gatehouse"])
            #expect(registration["user"]?["name"] == "john" && registration["user"]?["displayName"] == "John Doe")
            #expect(registration["attestation"] == "none")
            #expect(registration["pubKeyCredParams"]?.arrayValue?.compactMap { $0["alg"]?.intValue } == [-7, -257])
            #expect(Base64URL.decode(try #require(registration["challenge"]?.stringValue))?.count == 32)
            let registered = try await Self.answer(client, phone.register(registration))
            #expect(registered.status == 200, "\(String(decoding: registered.body, as: UTF8.self))")
            #expect(try await client.obtainToken(scope: "payments").scope.contains("payments"))

            // Another device of john's signs in with the passkey: its id allowed, a new challenge.
            let (other, next) = try await Self.loggedIn(server)
            let authentication = try #require(next["authentication"])
            #expect(authentication["rpId"] == "localhost")
            #expect(authentication["allowCredentials"] == [["type": "public-key", "id": .string(Base64URL.encode(phone.credentialID))]])
            #expect(authentication["challenge"] != registration["challenge"])
            let signedIn = try await Self.answer(other, try phone.signIn(authentication))
            #expect(signedIn.status == 200, "\(String(decoding: signedIn.body, as: UTF8.self))")
            // The operators' view of john: his passkey beside any other factor.
            let john = try await Admin.send(.GET, server, "/users/john", token: try await Admin.reader(server))
            #expect(john.json?["factors"]?.arrayValue?.map { $0["factor"] } == ["Passkey"])
        }
    }

    @Test func everyRefusalOfTheCeremonyIsAWrongAnswer() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var phone = SoftwareAuthenticator()
            let (client, challenge) = try await Self.loggedIn(server)
            func errorMessage(_ response: TestResponse) -> String { response.json?["challenges"]?["Passkey"]?["errorMsg"]?.stringValue ?? "" }
            // A page of another origin, another relying party, a stale challenge, no user verification.
            var foreign = phone
            foreign.origin = "https://evil.example"
            var wrong = try await Self.answer(client, foreign.register(challenge["registration"]))
            #expect(errorMessage(wrong).contains("origin https://evil.example is not one of the check's origins"))
            var otherSite = phone
            otherSite.rpID = "evil.example"
            let second = try await client.preauthorize(scope: "payments")
            wrong = try await Self.answer(client, otherSite.register(second.json?["challenges"]?["Passkey"]?["registration"]))
            #expect(errorMessage(wrong).contains("another relying party"))
            wrong = try await Self.answer(client, phone.register(challenge["registration"]))   // the first challenge, spent
            #expect(errorMessage(wrong).contains("answers another challenge"))
            let fresh = wrong.json?["challenges"]?["Passkey"]?["registration"]
            wrong = try await Self.answer(client, phone.register(fresh, flags: 0x01))
            #expect(errorMessage(wrong).contains("did not verify the user"))
            #expect(wrong.json?["challenges"]?["Passkey"]?["remainingAttempts"] == 1)
            let registered = try await Self.answer(client, phone.register(wrong.json?["challenges"]?["Passkey"]?["registration"]))
            #expect(registered.status == 200)

            // Sign-ins: a signature by another key, a counter that does not grow, garbage.
            let (other, next) = try await Self.loggedIn(server)
            var impostor = SoftwareAuthenticator()
            impostor = SoftwareAuthenticator(rpID: phone.rpID, origin: phone.origin, counter: phone.counter)
            var forged = try impostor.signIn(next["authentication"])
            forged = Self.replacingID(forged, with: phone.credentialID)
            wrong = try await Self.answer(other, forged)
            #expect(errorMessage(wrong).contains("signature does not verify"))
            #expect(try await Self.answer(other, try phone.signIn(wrong.json?["challenges"]?["Passkey"]?["authentication"], step: 5)).status == 200)
            let (third, last) = try await Self.loggedIn(server)
            var clone = phone
            clone.counter -= 3
            wrong = try await Self.answer(third, try clone.signIn(last["authentication"]))
            #expect(errorMessage(wrong).contains("counter went back"))
            for garbage: JSON in [["credential": "x"], ["credential": ["response": ["clientDataJSON": "!!"]]], ["pin": "1234"],
                                  ["credential": ["id": "AAAA", "response": ["clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AAAA"]]]] {
                let answered = try await Self.answer(third, garbage)
                #expect(answered.status == 401 || answered.status == 403)
            }
        }
    }

    @Test func thePolicyNamesTheSiteAndItsPageOrigins() {
        func refusal(_ properties: String) -> String? {
            do {
                _ = try SecurityPolicy.parse(yaml: "securityChecks: { P: { class: Passkey, properties: \(properties) } }\napplications: [{ id: a, platform: ios }]\n",
                                             file: "p.yaml", registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
                return nil
            } catch {
                return (error as? PolicyError)?.key
            }
        }
        #expect(refusal(#"{ rpID: example.com, origins: "https://example.com, https://app.example.com:8443" }"#) == nil)
        #expect(refusal(#"{ rpID: localhost, origins: "http://localhost:8080" }"#) == nil)
        for origins in ["http://example.com", "http://localhost.evil.example", "https://example.com/login", "example.com", ""] {
            #expect(refusal(#"{ rpID: example.com, origins: "\#(origins)" }"#) == "securityChecks.P.properties.origins", "\(origins)")
        }
        #expect(refusal(#"{ origins: "https://example.com" }"#) == "securityChecks.P.properties.rpID")
        #expect(refusal(#"{ rpID: "https://example.com", origins: "https://example.com" }"#) == "securityChecks.P.properties.rpID")
        #expect(refusal(#"{ rpID: example.com, origins: "https://example.com", userVerification: always }"#) == "securityChecks.P.properties.userVerification")
    }

    static func replacingID(_ answer: JSON, with id: [UInt8]) -> JSON {
        guard case .object(var outer) = answer, case .object(var credential)? = outer["credential"] else { return answer }
        credential["id"] = .string(Base64URL.encode(id))
        outer["credential"] = .object(credential)
        return .object(outer)
    }

    @Test func malformedAttestationsAndKeysAreRefusedWithoutACrash() throws {
        let expectation = WebAuthnProbe.expectation
        // Random bytes and cut-off documents: refused, never a crash.
        for length in [0, 1, 5, 37, 60, 200] {
            for _ in 0..<50 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
                #expect(WebAuthnProbe.registers(attestation: bytes, expecting: expectation) == false)
            }
        }
        let phone = SoftwareAuthenticator()
        let whole = SoftwareAuthenticator.cbor(.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
                                                     (.text("authData"), .bytes(phone.authenticatorData(flags: 0x05, attested: true)))]))
        for cut in stride(from: 0, to: whole.count, by: 7) {
            #expect(WebAuthnProbe.registers(attestation: Array(whole.prefix(cut)), expecting: expectation) == false)
        }
        // Packed with certificates is not trusted blindly.
        let packed = SoftwareAuthenticator.cbor(.map([(.text("fmt"), .text("packed")),
                                                      (.text("attStmt"), .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes([1])), (.text("x5c"), .bytes([1]))])),
                                                      (.text("authData"), .bytes(phone.authenticatorData(flags: 0x05, attested: true)))]))
        #expect(WebAuthnProbe.refusal(attestation: packed, expecting: expectation)?.contains("attestation certificates") == true)
    }
}

/// The check's WebAuthn verification called directly (internal to GatehouseChecks).
enum WebAuthnProbe {
    static let expectation = WebAuthn.Expectation(rpID: "localhost", origins: ["http://localhost:8080"], challenge: [UInt8](repeating: 7, count: 32),
                                                  userVerification: true)

    static func refusal(attestation: [UInt8], expecting: WebAuthn.Expectation) -> String? {
        let clientData = SoftwareAuthenticator().clientData("webauthn.create", challenge: Base64URL.encode(expecting.challenge))
        do {
            _ = try WebAuthn.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, expecting: expecting)
            return nil
        } catch {
            return error.description
        }
    }

    static func registers(attestation: [UInt8], expecting: WebAuthn.Expectation) -> Bool {
        refusal(attestation: attestation, expecting: expecting) == nil
    }
}
