import Foundation
import GatehouseChecks
@testable import GatehouseServer
import HummingbirdBcrypt
import Synchronization
import Testing

/// Hostile input round 2, finding 4 (the rest): a confidential client is never locked by its id, so its secret must
/// be too long to guess. A bcrypt hash in a policy cannot tell its secret's length when the policy is loaded; a node
/// serving beyond loopback refuses a short secret at its first use instead — like a wrong one, said once in the log.
@Suite(.timeLimit(.minutes(3))) struct WeakClientSecretTests {
    static func basic(_ id: String, _ secret: String) -> String { "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString() }

    @Test func aShortSecretIsRefusedBeyondLoopbackEvenWhenRight() async throws {
        let strong = "kq3-Zp8_Lm2xV7wT9rBn4cQ"   // 23 characters
        let clients = [
            ConfidentialClient(id: "weak", displayName: "weak", secretHash: Bcrypt.hash("s3cret", cost: 4), allowedScope: ["x"]),
            ConfidentialClient(id: "strong", displayName: "strong", secretHash: Bcrypt.hash(strong, cost: 4), allowedScope: ["x"]),
        ]
        let passwords = PasswordVerifier(lockouts: InMemoryAccountLockouts(policy: .disabled), decoyCost: 4)
        let told = Mutex<[String]>([])
        let beyond = ConfidentialClients(clients, passwords: passwords, minimumSecretLength: ConfidentialClients.strongSecretLength) { id, length in
            told.withLock { $0.append("\(id): \(length)") }
        }
        #expect(try await beyond.authenticate(authorization: Self.basic("weak", "s3cret")) == nil)
        #expect(try await beyond.authenticate(authorization: Self.basic("weak", "s3cret")) == nil)
        #expect(told.withLock { $0 } == ["weak: 6"], "said once")
        #expect(try await beyond.authenticate(authorization: Self.basic("strong", strong))?.id == "strong")
        #expect(beyond.rememberedClient(authorization: Self.basic("weak", "s3cret")) == nil, "never remembered")
        // On loopback (the demo, tests, a laptop) any secret the policy holds works.
        let loopback = ConfidentialClients(clients, passwords: passwords)
        #expect(try await loopback.authenticate(authorization: Self.basic("weak", "s3cret"))?.id == "weak")
    }
}
