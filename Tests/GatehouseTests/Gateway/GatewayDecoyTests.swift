import Foundation
@testable import GatehouseGateway
import Testing

/// The `users` login module answers an unknown user as slowly as a known one: its decoy hash has the users' cost.
@Suite struct GatewayDecoyTests {
    @Test(.timeLimit(.minutes(1))) func theDecoyTakesTheUsersCost() {
        #expect(UsersLoginModule.cost(of: "$2b$12$abcdefghijklmnopqrstuu") == 12)
        #expect(UsersLoginModule.cost(of: "$2y$08$x") == 8)
        #expect(UsersLoginModule.cost(of: "plain") == nil)
        let module = UsersLoginModule(users: [GatewayFixture.joe, .hashing(username: "eve", password: "x", cost: 6)])
        #expect(UsersLoginModule.cost(of: module.decoyHash) == 6)
    }

    @Test(.timeLimit(.minutes(1))) func anUnknownUserTakesAsLongAsAWrongPassword() async {
        // Cost 9 users: a decoy at the former fixed cost 10 took twice as long as a wrong password.
        let module = UsersLoginModule(users: [.hashing(username: "joe", password: "welcome", cost: 9)], verifiedLifetime: .zero)
        func attempt(_ user: String) async -> Duration {
            let start = ContinuousClock.now
            let result = await module.login(Credentials(scheme: "Basic", value: Data("\(user):nope".utf8).base64EncodedString()), scheme: .basic)
            #expect(result == .failure("wrong user name or password"))
            return ContinuousClock.now - start
        }
        // Interleaved, so that a change of load slows both alike; medians of 7.
        var knownTimes: [Duration] = []
        var unknownTimes: [Duration] = []
        for _ in 0..<7 {
            knownTimes.append(await attempt("joe"))
            unknownTimes.append(await attempt("nobody"))
        }
        let known = knownTimes.sorted()[3]
        let unknown = unknownTimes.sorted()[3]
        let ratio = unknown / known
        #expect(ratio > 0.6 && ratio < 1.6, "unknown \(unknown), known \(known)")
    }
}
