import Foundation
import GatehouseProtocol

/// A challenge of the server's `TOTP` check, read: an enrolment to show (a user without a secret yet) or a code to
/// ask for, with the check's message and counts.
public struct TOTPChallenge: Sendable, Equatable {
    /// A new secret for the user's authenticator app: show ``qrCodeSVG`` to scan, or ``otpauthURI`` / ``secret``
    /// to type, then ask for a code of it.
    public struct Enrolment: Sendable, Equatable {
        /// The secret in base32.
        public var secret: String
        /// The `otpauth://totp/…` URI authenticator apps read.
        public var otpauthURI: String
        /// The URI as a QR code (SVG), when it fits one.
        public var qrCodeSVG: String?
        /// `SHA1`, `SHA256` or `SHA512`; 6 to 8 digits; seconds a code lasts.
        public var algorithm: String
        public var digits: Int
        public var period: Int
    }

    /// The enrolment, for a user without a secret; `nil` when the user has one (ask for its code).
    public var enrolment: Enrolment?
    /// Why the last answer was refused (`The code is not valid.`); `nil` in a fresh round of attempts.
    public var errorMessage: String?
    /// Wrong answers left before the check blocks.
    public var remainingAttempts: Int?
    /// Unused recovery codes of an enrolled user.
    public var recoveryCodesLeft: Int?

    /// Reads a `TOTP` check's challenge.
    public init(_ challenge: JSONObject) {
        errorMessage = challenge["errorMsg"]?.stringValue
        remainingAttempts = challenge["remainingAttempts"]?.intValue
        recoveryCodesLeft = challenge["recoveryCodesLeft"]?.intValue
        if case .object(let enrolment)? = challenge["enrolment"], let secret = enrolment["secret"]?.stringValue,
           let uri = enrolment["otpauthURI"]?.stringValue {
            self.enrolment = Enrolment(
                secret: secret, otpauthURI: uri, qrCodeSVG: enrolment["qrCodeSVG"]?.stringValue,
                algorithm: enrolment["algorithm"]?.stringValue ?? "SHA1", digits: enrolment["digits"]?.intValue ?? 6,
                period: enrolment["period"]?.intValue ?? 30)
        }
    }
}

/// What the user gave for a ``TOTPChallenge``.
public enum TOTPAnswer: Sendable, Equatable {
    /// The code the authenticator app shows.
    case code(String)
    /// One of the recovery codes shown at enrolment (a lost phone).
    case recoveryCode(String)
    /// The user gave up: the request fails with ``GatehouseClientError/challengeCancelled(securityCheck:)``.
    case cancel
}

/// The app's side of the `TOTP` check: a screen that shows an enrolment or asks for a code.
public protocol TOTPPrompt: Sendable {
    /// Shows the enrolment (its QR code) or asks for a code; what the user answered.
    func answer(_ challenge: TOTPChallenge) async -> TOTPAnswer
    /// The recovery codes an enrolment made: shown to the user this once (the server keeps only their digests).
    func showRecoveryCodes(_ codes: [String]) async
}

/// The challenge handler of the server's `TOTP` check (a second factor after the login): reads its challenges into
/// ``TOTPChallenge`` for a ``TOTPPrompt`` and sends the code or recovery code the user gave; hands the recovery codes of
/// an enrolment to the prompt once.
///
/// ```swift
/// try client.registerChallengeHandler(TOTPChallengeResponder(prompt: CodeScreen()))
/// let token = try await client.obtainAccessToken(forScope: "transfers")   // the login first, then the code
/// ```
public struct TOTPChallengeResponder: SecurityCheckChallengeResponder {
    public let securityCheck: String
    let prompt: any TOTPPrompt

    /// - Parameters:
    ///   - securityCheck: the check's name in the policy (`TOTP` by default).
    ///   - prompt: the app's screen.
    public init(securityCheck: String = "TOTP", prompt: any TOTPPrompt) {
        self.securityCheck = securityCheck
        self.prompt = prompt
    }

    public func respond(to challenge: JSONObject) async -> ChallengeAnswer {
        switch await prompt.answer(TOTPChallenge(challenge)) {
        case .code(let code): .answer(["code": .string(code)])
        case .recoveryCode(let code): .answer(["recoveryCode": .string(code)])
        case .cancel: .cancel
        }
    }

    public func handleSuccess(_ success: JSONObject) async {
        guard case .array(let items)? = success["recoveryCodes"] else { return }
        await prompt.showRecoveryCodes(items.compactMap(\.stringValue))
    }
}
