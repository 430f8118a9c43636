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
        // Split at the first colon byte (RFC 7617), even when a combining mark follows it (one Character with it).
        func basic(_ bytes: [UInt8]) -> String { "Basic " + Data(bytes).base64EncodedString() }
        let marked = try #require(ClientSecretBasic.parse(basic(Array("svc:\u{0369}x".utf8))))
        #expect(marked.clientID == "svc" && marked.secret == "\u{0369}x")
        #expect(ClientSecretBasic.parse(basic(Array("svc".utf8))) == nil, "no colon")
        #expect(ClientSecretBasic.parse(basic(Array("svc:".utf8) + [0xFF])) == nil, "a secret that is not UTF-8")
        #expect(ClientSecretBasic.parse("  basic \t" + String(basic(Array("a:b".utf8)).dropFirst(6)) + " ")?.clientID == nil, "leading blanks")
        #expect(ClientSecretBasic.parse("bAsIc \t" + String(basic(Array("a:b".utf8)).dropFirst(6)) + " \t")?.secret == "b")
    }

    @Test func bearerAnswers() {
        #expect(BearerAnswer.insufficientScope(Scope("accessRestricted RegisteredClient")) == #"Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted""#)
    }
}
