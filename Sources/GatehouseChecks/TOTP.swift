import Crypto
import Foundation
public import GatehouseProtocol

/// A second factor: a time-based one-time code (RFC 6238) from the user's authenticator app, after the user's
/// login — declare it with `requires: [UserLogin]` in the policy, so that the login runs first and this check asks
/// for the code of the user the login made active.
///
/// - **Enrolment**: a user without a secret is challenged with a new one —
///   `{"errorMsg":null,"remainingAttempts":3,"enrolment":{"secret":"JBSW…","otpauthURI":"otpauth://totp/…",
///   "qrCodeSVG":"<svg …>","algorithm":"SHA1","digits":6,"period":30}}` (the QR code of the URI, for the app to
///   show) — and proves a code of it; the success then carries
///   `{"recoveryCodes":["ABCD-EFGH-IJKL-MNOP", …]}`, shown this once (stored as SHA-256 digests).
/// - **Login**: `{"code":"123456"}` (the current step, or one step either side), or `{"recoveryCode":"ABCD-…"}`;
///   each code is accepted once per user on every node (the step is recorded as used), each recovery code once.
/// - Wrong codes count as `CredentialsValidationSecurityCheck` counts them (attempts, block) and against the
///   account `totp:<user>` of the policy's account lockout, on every node.
///
/// Properties: `issuer` (the name authenticator apps show, default `Gatehouse`), `algorithm` (`SHA1`, `SHA256`,
/// `SHA512`), `digits` (6–8), `period` (seconds, 30), `window` (steps either side accepted, 1), `recoveryCodes`
/// (how many, 10), and those of ``CredentialsValidationConfiguration`` (`maxAttempts` 3 by default). The secret's
/// algorithm, digits and period are kept with it: changing them later concerns new enrolments only.
public struct TOTP: SecondFactorSecurityCheck {
    public struct CheckData: SecondFactorCheckData {
        public var userID: String?
        public var authenticatedAt: Int64?
        public var errorMsg: String?
        /// The secret offered to a user who has none yet (base32), until the user proves a code of it.
        public var pendingSecret: String?
        /// Recovery codes made by this round's enrolment: shown in its success, never stored as they are.
        public var newRecoveryCodes: [String]?
        public init() {}
    }

    /// What the store keeps of an enrolled user.
    struct Enrolment: Codable, Equatable {
        var secret: String
        var algorithm: OneTimePassword.Algorithm
        var digits: Int
        var period: Int
        /// Base64url SHA-256 digests of the unused recovery codes.
        var recoveryCodes: [String]

        var generator: OneTimePassword? {
            guard let bytes = Base32.decode(secret), (6...8).contains(digits), period > 0 else { return nil }
            return OneTimePassword(secret: bytes, algorithm: algorithm, digits: digits, period: period)
        }
    }

    public let name: String
    public let validation: CredentialsValidationConfiguration
    let issuer: String
    let algorithm: OneTimePassword.Algorithm
    let digits: Int
    let period: Int
    let window: Int
    let recoveryCodeCount: Int
    let factors: any UserFactorStore
    let oneTimeUses: OneTimeUses
    let lockouts: any AccountLockouts

    public init(name: String, properties: inout SecurityCheckProperties, services: SecurityCheckServices) {
        self.name = name
        validation = CredentialsValidationConfiguration(properties: &properties, defaults: .init(maxAttempts: 3))
        issuer = properties.string("issuer", default: "Gatehouse")
        let algorithm = OneTimePassword.Algorithm(rawValue: properties.string("algorithm", default: "SHA1").uppercased().replacingOccurrences(of: "-", with: ""))
        if algorithm == nil { properties.error("algorithm", "must be SHA1, SHA256 or SHA512") }
        self.algorithm = algorithm ?? .sha1
        digits = properties.int("digits", default: 6, range: 6...8)
        period = properties.int("period", default: 30, range: 15...300)
        window = properties.int("window", default: 1, range: 0...10)
        recoveryCodeCount = properties.int("recoveryCodes", default: 10, range: 0...100)
        if issuer.isEmpty || issuer.contains(":") { properties.error("issuer", "must be a non-empty name without ':'") }
        factors = services.factors
        oneTimeUses = services.oneTimeUses
        lockouts = services.passwords.lockouts
    }

    /// The account its wrong codes are counted against in the account lockout.
    public static func account(_ user: String) -> String { "totp:\(user)" }

    /// The recovery codes an enrolment made in this round: shown in its success, once.
    public func takeSuccessData(state: inout State) -> JSONObject? {
        defer { state.data.newRecoveryCodes = nil }
        return state.data.newRecoveryCodes.map { ["recoveryCodes": .array($0.map(JSON.string))] }
    }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        guard let user = state.data.userID else { return false }
        let account = Self.account(user)
        let now = client.now
        if try await lockouts.isLocked(account, now: now) {
            state.data.errorMsg = "Too many wrong codes: try again later."
            return false
        }
        let stored = try await factors.userFactor(username: user, factor: name)
        let enrolment = try stored?.decoded(as: Enrolment.self)
        if let answer = credentials["recoveryCode"]?.stringValue {
            guard let stored, let enrolment else {
                state.data.errorMsg = "There are no recovery codes before enrolment: enter a code of the new secret."
                return false
            }
            return try await useRecoveryCode(answer, stored: stored, enrolment: enrolment, account: account, state: &state, now: now)
        }
        guard let code = credentials["code"].flatMap({ $0.stringValue ?? $0.intValue.map { String($0) } }), !code.isEmpty else {
            state.data.errorMsg = "The code was not provided."
            return false
        }
        let generator: OneTimePassword?
        if let enrolment {
            generator = enrolment.generator
        } else {
            generator = state.data.pendingSecret.flatMap(Base32.decode).map {
                OneTimePassword(secret: $0, algorithm: algorithm, digits: digits, period: period)
            }
        }
        guard let generator, let step = generator.matchingStep(of: code, at: now, window: window) else {
            return try await concluded(false, message: "The code is not valid.", account: account, lockouts: lockouts, state: &state, now: now)
        }
        // Once per user and step, on every node: a code seen over a shoulder or in a log is spent.
        let expires = (step + Int64(window) + 1) * Int64(generator.period) * 1000
        guard try await oneTimeUses.consume("totp:\(name):\(user):\(step)", expires, now) else {
            state.data.errorMsg = "This code was used already: wait for the next one."
            return false
        }
        if enrolment == nil {
            guard let secret = state.data.pendingSecret else { return false }
            let codes = (0..<recoveryCodeCount).map { _ in Self.newRecoveryCode() }
            let made = Enrolment(secret: secret, algorithm: algorithm, digits: digits, period: period, recoveryCodes: codes.map(Self.digest))
            let record = UserFactorRecord(username: user, factor: name, data: try UserFactorRecord.encoded(made), enrolledAt: now)
            guard try await factors.saveUserFactor(record, expectedVersion: 0) else {
                state.data.pendingSecret = nil
                state.data.errorMsg = "You enrolled on another device meanwhile: enter a code of that secret."
                return false
            }
            state.data.pendingSecret = nil
            state.data.newRecoveryCodes = codes
        }
        return try await concluded(true, account: account, lockouts: lockouts, state: &state, now: now)
    }

    private func useRecoveryCode(
        _ answer: String, stored: UserFactorRecord, enrolment: Enrolment, account: String, state: inout State, now: Int64
    ) async throws -> Bool {
        let digest = Self.digest(answer)
        var remaining: [String] = []
        var matched = false
        for code in enrolment.recoveryCodes {
            if ConstantTime.equals(code, digest) { matched = true } else { remaining.append(code) }
        }
        guard matched else {
            return try await concluded(false, message: "The recovery code is not valid.", account: account, lockouts: lockouts, state: &state, now: now)
        }
        var updated = enrolment
        updated.recoveryCodes = remaining
        var record = stored
        record.data = try UserFactorRecord.encoded(updated)
        guard try await factors.saveUserFactor(record, expectedVersion: stored.version) else {
            state.data.errorMsg = "The recovery code is not valid."
            return false
        }
        return try await concluded(true, account: account, lockouts: lockouts, state: &state, now: now)
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        var challenge = attemptsChallenge(state: state)
        guard let user = state.data.userID else { return challenge }
        if let stored = try await factors.userFactor(username: user, factor: name) {
            let enrolment = try? stored.decoded(as: Enrolment.self)
            challenge["recoveryCodesLeft"] = .int(Int64(enrolment?.recoveryCodes.count ?? 0))
            return challenge
        }
        let secret = state.data.pendingSecret ?? Base32.encode((0..<20).map { _ in UInt8.random(in: 0...255) })
        state.data.pendingSecret = secret
        let generator = OneTimePassword(secret: Base32.decode(secret) ?? [], algorithm: algorithm, digits: digits, period: period)
        let uri = generator.uri(issuer: issuer, account: user)
        var enrolment: JSONObject = [
            "secret": .string(secret), "otpauthURI": .string(uri),
            "algorithm": .string(algorithm.rawValue), "digits": .int(Int64(digits)), "period": .int(Int64(period)),
        ]
        // What the app shows the user to scan (a very long user name may not fit a QR code: the URI and secret remain).
        if let code = QRCode(text: uri) { enrolment["qrCodeSVG"] = .string(code.svg()) }
        challenge["enrolment"] = .object(enrolment)
        return challenge
    }

    /// A recovery code: 16 base32 characters (80 bits) in groups of four.
    static func newRecoveryCode() -> String {
        let characters = Array(Base32.encode((0..<10).map { _ in UInt8.random(in: 0...255) }))
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// How a recovery code is stored and compared: the base64url SHA-256 of its characters without separators, upper
    /// case (as authorization codes are stored).
    static func digest(_ code: String) -> String {
        let normalized = code.uppercased().filter { $0 != "-" && !$0.isWhitespace }
        return Base64URL.encode(Array(SHA256.hash(data: Data(normalized.utf8))))
    }
}
