import Foundation
import GatehouseChecks
@testable import GatehouseGateway
import Testing

/// The `users` login module answers an unknown user as slowly as a known one: its decoy hash has the users' cost.
@Suite(.timeLimit(.minutes(3))) struct GatewayDecoyTests {
    @Test(.timeLimit(.minutes(3))) func theDecoyTakesTheUsersCost() {
        #expect(PasswordVerifier.cost(of: "$2b$12$abcdefghijklmnopqrstuu") == 12)
        #expect(PasswordVerifier.cost(of: "$2y$08$x") == 8)
        #expect(PasswordVerifier.cost(of: "plain") == nil)
        let module = UsersLoginModule(users: [GatewayFixture.joe, .hashing(username: "eve", password: "x", cost: 6)])
        #expect(PasswordVerifier.cost(of: module.decoyHash) == 6)
    }
}
