import Foundation
import GatehouseProtocol
import Testing

/// Seed 000: the SimpleCaptcha check, end to end over HTTP.
@Suite(.timeLimit(.minutes(3))) struct SimpleCaptchaTests {
    @Test func challengeWrongAnswerRightAnswerThenToken() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()

            let first = try await client.preauthorize(scope: "SimpleCaptcha")
            #expect(first.status == 401)
            #expect(first.header("WWW-Authenticate") == "MFP-Challenge")
            let challenge = try #require(first.json?["challenges"]?["SimpleCaptcha"])
            #expect(challenge["captcha"]?.stringValue?.contains(" + ") == true)
            #expect(challenge["message"] == .null)
            #expect(first.json?["successes"]?["clockSynchronization"]?["serverTimeStamp"]?.intValue != nil)

            let wrong = try await client.preauthorize(scope: "SimpleCaptcha", answers: ["SimpleCaptcha": ["answer": "1000"]])
            #expect(wrong.status == 401)
            let second = try #require(wrong.json?["challenges"]?["SimpleCaptcha"])
            #expect(second["message"]?.stringValue == "Wrong answer, try again")

            let right = try await client.preauthorize(scope: "SimpleCaptcha", answers: ["SimpleCaptcha": ProtocolClient.captchaAnswer(second)])
            #expect(right.status == 200)
            #expect(right.json?["successes"]?["SimpleCaptcha"] == .object([:]))

            let token = try await client.obtainToken(scope: "SimpleCaptcha")
            #expect(token.token_type == "Bearer")
            #expect(token.scope == "RegisteredClient SimpleCaptcha")
            #expect(token.access_token.split(separator: ".").count == 3)

            // While the success lasts, the next token needs no challenge.
            let again = try await client.preauthorize(scope: "SimpleCaptcha")
            #expect(again.status == 200)
            let secondToken = try await client.obtainToken(scope: "SimpleCaptcha")
            #expect(secondToken.access_token != token.access_token)
        }
    }

    @Test func aScopeMappedToTwoChecksChallengesBothInOneRound() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let round = try await client.preauthorize(scope: "both")
            #expect(round.status == 401)
            let challenges = try #require(round.json?["challenges"]?.objectValue)
            #expect(Set(challenges.keys) == ["SimpleCaptcha", "PinCodeAttempts"])
            #expect(challenges["PinCodeAttempts"] == ["errorMsg": nil, "remainingAttempts": 3])

            let answered = try await client.preauthorize(scope: "both", answers: [
                "SimpleCaptcha": ProtocolClient.captchaAnswer(challenges["SimpleCaptcha"]), "PinCodeAttempts": ["pin": "1234"],
            ])
            #expect(answered.status == 200)
            #expect(Set(answered.json?["successes"]?.objectValue?.keys ?? [:].keys) == ["SimpleCaptcha", "PinCodeAttempts", "clockSynchronization"])
            let token = try await client.obtainToken(scope: "both")
            #expect(token.scope == "RegisteredClient both")
        }
    }
}
