import Foundation
import GatehouseProtocol
import Testing

/// One home for the confidential clients' HTTP Basic form (RFC 6749 §2.3.1) and the Bearer answers.
@Suite(.timeLimit(.minutes(3))) struct ClientSecretBasicTests {
    @Test func idsAndSecretsWithSpecialCharactersSurviveTheRoundTrip() throws {
        for (id, secret) in [("balance-service", "s3cret"), ("svc", "p:a+s%s w/ö"), ("a b", "")] {
            let header = ClientSecretBasic.authorization(clientID: id, secret: secret)
            let parsed = try #require(ClientSecretBasic.parse(header))
            #expect(parsed.clientID == id)
            #expect(parsed.secret == secret)
        }
        // The colon inside a secret is encoded, so it cannot end the id early.
        let encoded = String(decoding: Data(base64Encoded: String(ClientSecretBasic.authorization(clientID: "svc", secret: "a:b").dropFirst(6)))!, as: UTF8.self)
        #expect(encoded == "svc:a%3Ab")
        #expect(ClientSecretBasic.parse("Bearer x") == nil)
        #expect(ClientSecretBasic.parse("Basic !!!") == nil)
    }

    @Test func bearerAnswers() {
        #expect(BearerAnswer.insufficientScope(Scope("accessRestricted RegisteredClient")) == #"Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted""#)
    }
}
