import Foundation
import GatehouseChecks
import GatehouseClient
import GatehouseProtocol
import Synchronization
import Testing

/// The SDK's `TOTP` handler against a real server: an app's prompt sees the enrolment (its QR code) and is given the
/// recovery codes once; another device answers with a recovery code.
@Suite(.timeLimit(.minutes(3))) struct SDKTOTPTests {
    /// A prompt that plays the user with an authenticator app: it scans the enrolment's secret and types the code.
    final class AuthenticatorUser: TOTPPrompt {
        let seen = Mutex<[TOTPChallenge]>([])
        let recoveryCodes = Mutex<[String]>([])
        let secret = Mutex<[UInt8]?>(nil)
        let useRecoveryCode: Bool

        init(secret: [UInt8]? = nil, useRecoveryCode: String? = nil) {
            self.secret.withLock { $0 = secret }
            self.useRecoveryCode = useRecoveryCode != nil
            if let useRecoveryCode { recoveryCodes.withLock { $0 = [useRecoveryCode] } }
        }

        func answer(_ challenge: TOTPChallenge) async -> TOTPAnswer {
            seen.withLock { $0.append(challenge) }
            if useRecoveryCode, let code = recoveryCodes.withLock({ $0.first }) { return .recoveryCode(code) }
            if let enrolment = challenge.enrolment { secret.withLock { $0 = Base32.decode(enrolment.secret) } }
            guard let bytes = secret.withLock({ $0 }) else { return .cancel }
            return .code(OneTimePassword(secret: bytes).code(at: Int64(Date().timeIntervalSince1970 * 1000)))
        }

        func showRecoveryCodes(_ codes: [String]) async { recoveryCodes.withLock { $0 = codes } }
    }

    static func client(_ server: TestServer, prompt: AuthenticatorUser) throws -> GatehouseClient {
        let client = SDK.client(server, app: "com.sample.bank")
        try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "UserLogin") { _ in .answer(["username": "john", "password": "demo"]) })
        try client.registerChallengeHandler(TOTPChallengeResponder(prompt: prompt))
        return client
    }

    @Test func enrolmentThenARecoveryCodeOnAnotherDevice() async throws {
        try await TestServer.run(policy: TOTPTests.policy) { server in
            let phone = AuthenticatorUser()
            let token = try await Self.client(server, prompt: phone).obtainAccessToken(forScope: "transfers")
            #expect(token.scope.contains("transfers"))
            let enrolment = try #require(phone.seen.withLock { $0.first?.enrolment })
            #expect(enrolment.otpauthURI.hasPrefix("otpauth://totp/Example%20Bank:john?secret=\(enrolment.secret)"))
            #expect(enrolment.qrCodeSVG?.hasPrefix("<svg") == true && enrolment.digits == 6 && enrolment.period == 30)
            #expect(phone.seen.withLock { $0.first?.remainingAttempts } == 3)
            let codes = phone.recoveryCodes.withLock { $0 }
            #expect(codes.count == 3)

            // The phone is lost: a new device, john's password, then a recovery code.
            let tablet = AuthenticatorUser(useRecoveryCode: codes[0])
            #expect(try await Self.client(server, prompt: tablet).obtainAccessToken(forScope: "transfers").scope.contains("transfers"))
            let asked = try #require(tablet.seen.withLock { $0.first })
            #expect(asked.enrolment == nil && asked.recoveryCodesLeft == 3)
        }
    }
}
