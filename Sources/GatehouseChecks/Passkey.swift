import Crypto
import Foundation
public import GatehouseProtocol

/// Passkeys (WebAuthn) as a security check after the user's login — `requires: [UserLogin]` in the policy — or as the
/// second factor of any check that makes a user active: the first round of a user without a passkey registers one,
/// the later ones sign in with it.
///
/// - **Registration**: `{"errorMsg":null,"remainingAttempts":3,"registration":{…}}`, the `PublicKeyCredentialCreationOptions`
///   (binary members in base64url: `challenge`, `user.id`) for `navigator.credentials.create({publicKey})`; answer
///   `{"credential":{"id":…,"type":"public-key","response":{"clientDataJSON":…,"attestationObject":…}}}` (base64url).
/// - **Authentication**: `{"authentication":{…}}`, the `PublicKeyCredentialRequestOptions` (`challenge`,
///   `allowCredentials[].id` in base64url) for `navigator.credentials.get({publicKey})`; answer `{"credential":{"id":…,
///   "response":{"clientDataJSON":…,"authenticatorData":…,"signature":…}}}`.
///
/// Every challenge is new and answered once; the page's origin must be one of `origins`, the credential registered for
/// `rpID`; the authenticator's counter must grow (a cloned authenticator is refused). ES256 and RS256 keys, `none`
/// attestation (WebAuthn.swift). Properties: `rpID` (the site's domain, required), `origins` (required), `rpName`
/// (`Gatehouse`), `userVerification` (`required`, `preferred` — the default — or `discouraged`; `required` refuses an
/// authenticator that did not verify the user), `timeoutSec` (120, the browser's), and those of
/// ``CredentialsValidationConfiguration`` (`maxAttempts` 3 by default).
public struct Passkey: SecondFactorSecurityCheck {
    public struct CheckData: SecondFactorCheckData {
        public var userID: String?
        public var authenticatedAt: Int64?
        public var errorMsg: String?
        /// The challenge of the last ceremony offered (base64url), answered once.
        public var challenge: String?
        public init() {}
    }

    /// What the store keeps of a user's passkeys.
    struct Enrolment: Codable, Equatable {
        struct Credential: Codable, Equatable {
            /// The credential id (base64url).
            var id: String
            var key: WebAuthn.PublicKey
            var signCount: UInt32
            var createdAt: Int64
        }
        var credentials: [Credential]
    }

    public let name: String
    public let validation: CredentialsValidationConfiguration
    let rpID: String
    let rpName: String
    let origins: Set<String>
    let userVerification: String
    let timeoutSec: Int
    let factors: any UserFactorStore
    let lockouts: any AccountLockouts

    public init(name: String, properties: inout SecurityCheckProperties, services: SecurityCheckServices) {
        self.name = name
        validation = CredentialsValidationConfiguration(properties: &properties, defaults: .init(maxAttempts: 3))
        rpID = properties.string("rpID", default: "")
        rpName = properties.string("rpName", default: "Gatehouse")
        origins = Set(properties.strings("origins", default: []))
        userVerification = properties.string("userVerification", default: "preferred")
        timeoutSec = properties.int("timeoutSec", default: 120, range: 10...600)
        if rpID.isEmpty || rpID.contains("/") || rpID.contains(":") {
            properties.error("rpID", "is required: the site's domain (example.com), as the pages' origins have it")
        }
        if origins.isEmpty || !origins.allSatisfy(Self.isPageOrigin) {
            properties.error("origins", "is required: the pages' origins (https://example.com; http only for localhost)")
        }
        if !["required", "preferred", "discouraged"].contains(userVerification) {
            properties.error("userVerification", "must be required, preferred or discouraged")
        }
        factors = services.factors
        lockouts = services.passwords.lockouts
    }

    /// Whether `origin` is a page origin WebAuthn runs on: `https://host[:port]`, or `http://localhost[:port]` (a
    /// secure context too), without a path.
    static func isPageOrigin(_ origin: String) -> Bool {
        guard let components = URLComponents(string: origin), let host = components.host, !host.isEmpty,
              components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
        else { return false }
        return components.scheme == "https" || (components.scheme == "http" && host == "localhost")
    }

    /// The account its refused answers are counted against in the account lockout.
    public static func account(_ user: String) -> String { "passkey:\(user)" }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        guard let user = state.data.userID else { return false }
        // The challenge is answered once, right or wrong.
        let challenge = state.data.challenge.flatMap(Base64URL.decode).map(Array.init)
        state.data.challenge = nil
        let account = Self.account(user)
        if try await lockouts.isLocked(account, now: client.now) {
            state.data.errorMsg = "Too many refused passkeys: try again later."
            return false
        }
        guard let challenge, case .object(let credential)? = credentials["credential"], case .object(let answer)? = credential["response"],
              let clientData = bytes(answer["clientDataJSON"])
        else {
            state.data.errorMsg = "The passkey's answer was not provided."
            return false
        }
        let expecting = WebAuthn.Expectation(rpID: rpID, origins: origins, challenge: challenge, userVerification: userVerification == "required")
        let stored = try await factors.userFactor(username: user, factor: name)
        let enrolment = try stored?.decoded(as: Enrolment.self)
        do {
            if let stored, var enrolment {
                guard let id = credential["id"]?.stringValue ?? credential["rawId"]?.stringValue,
                      let index = enrolment.credentials.firstIndex(where: { $0.id == id }),
                      let authenticatorData = bytes(answer["authenticatorData"]), let signature = bytes(answer["signature"])
                else { throw WebAuthn.Failure("not a sign-in with one of the user's passkeys") }
                let count = try WebAuthn.verifyAssertion(
                    clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature,
                    key: enrolment.credentials[index].key, storedCount: enrolment.credentials[index].signCount, expecting: expecting)
                enrolment.credentials[index].signCount = count
                var record = stored
                record.data = try UserFactorRecord.encoded(enrolment)
                // Two sign-ins with one counter value at once: the second write finds the version gone.
                guard try await factors.saveUserFactor(record, expectedVersion: stored.version) else {
                    throw WebAuthn.Failure("the passkey was used at the same moment elsewhere")
                }
            } else {
                guard let attestation = bytes(answer["attestationObject"]) else { throw WebAuthn.Failure("not a registration of a new passkey") }
                let made = try WebAuthn.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, expecting: expecting)
                let enrolment = Enrolment(credentials: [.init(id: Base64URL.encode(made.credentialID), key: made.key, signCount: made.signCount,
                                                              createdAt: client.now)])
                let record = UserFactorRecord(username: user, factor: name, data: try UserFactorRecord.encoded(enrolment), enrolledAt: client.now)
                guard try await factors.saveUserFactor(record, expectedVersion: 0) else {
                    throw WebAuthn.Failure("a passkey was registered on another device meanwhile: sign in with it")
                }
            }
        } catch let refusal as WebAuthn.Failure {
            return try await concluded(false, message: "The passkey was refused: \(refusal.description).", account: account, lockouts: lockouts,
                                       state: &state, now: client.now)
        }
        return try await concluded(true, account: account, lockouts: lockouts, state: &state, now: client.now)
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        var challenge = attemptsChallenge(state: state)
        guard let user = state.data.userID else { return challenge }
        let nonce = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        state.data.challenge = nonce
        let timeout = JSON.int(Int64(timeoutSec) * 1000)
        if let stored = try await factors.userFactor(username: user, factor: name),
           let enrolment = try? stored.decoded(as: Enrolment.self), !enrolment.credentials.isEmpty {
            challenge["authentication"] = .object([
                "challenge": .string(nonce), "rpId": .string(rpID), "timeout": timeout, "userVerification": .string(userVerification),
                "allowCredentials": .array(enrolment.credentials.map { .object(["type": "public-key", "id": .string($0.id)]) }),
            ])
        } else {
            // The user handle: not the name itself (authenticators may show or keep it), a digest of it.
            let handle = Base64URL.encode(Array(SHA256.hash(data: Data("gatehouse-user:\(user)".utf8)).prefix(16)))
            let displayName = client.activeUser?.displayName ?? user
            challenge["registration"] = .object([
                "challenge": .string(nonce), "timeout": timeout, "attestation": "none",
                "rp": .object(["id": .string(rpID), "name": .string(rpName)]),
                "user": .object(["id": .string(handle), "name": .string(user), "displayName": .string(displayName)]),
                "pubKeyCredParams": .array([.object(["type": "public-key", "alg": -7]), .object(["type": "public-key", "alg": -257])]),
                "authenticatorSelection": .object(["residentKey": "preferred", "userVerification": .string(userVerification)]),
            ])
        }
        return challenge
    }

    /// A base64url member of the answer.
    private func bytes(_ value: JSON?) -> [UInt8]? {
        value?.stringValue.flatMap(Base64URL.decode).map(Array.init)
    }
}
