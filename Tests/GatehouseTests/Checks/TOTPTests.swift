import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// The TOTP check after the user's login (`requires: [UserLogin]`): enrolment through the challenge, codes once per
/// user on every node, recovery codes once, the user's login first in every round.
@Suite(.timeLimit(.minutes(3))) struct TOTPTests {
    static let policy = """
        registrationThrottle: { perAddress: 0 }
        securityChecks:
          UserLogin:
            class: UserLogin
            properties: { maxAttempts: 3, successStateExpirationSec: 300 }
          TOTP:
            class: TOTP
            requires: [UserLogin]
            properties: { issuer: Example Bank, maxAttempts: 3, blockedStateExpirationSec: 60, recoveryCodes: 3 }
        applications:
          - id: com.sample.bank
            platform: ios
            scopeElementMapping: { transfers: TOTP, balance: UserLogin }
        confidentialClients:
          - { id: ops, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "gatehouse.admin gatehouse.admin.read" }
          - { id: ops-viewer, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "gatehouse.admin.read" }
          - { id: balance-service, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "authorization.introspect" }
        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu" }
          - { username: jane, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu" }
        """

    static let john: JSON = ["UserLogin": ["username": "john", "password": "demo"]]

    /// A registered client of the bank app whose user has logged in (the round answered with the TOTP challenge).
    static func loggedIn(_ server: TestServer, user: String = "john") async throws -> (client: ProtocolClient, challenge: JSON) {
        var client = try ProtocolClient(server, app: "com.sample.bank")
        try await client.register()
        let first = try await client.preauthorize(scope: "transfers")
        // The login first, alone: the second factor waits for it.
        #expect(first.status == 401)
        #expect(first.json?["challenges"]?["UserLogin"] != nil)
        #expect(first.json?["challenges"]?["TOTP"] == nil)
        let login = try await client.preauthorize(scope: "transfers", answers: ["UserLogin": ["username": .string(user), "password": "demo"]])
        #expect(login.status == 401, "\(String(decoding: login.body, as: UTF8.self))")
        return (client, try #require(login.json?["challenges"]?["TOTP"]))
    }

    static func code(_ enrolment: JSON?, offset: Int64 = 0) throws -> String {
        let secret = try #require(enrolment?["secret"]?.stringValue.flatMap(Base32.decode))
        return OneTimePassword(secret: secret).code(at: Int64(Date().timeIntervalSince1970 * 1000) + offset)
    }

    @Test func enrolmentLoginWithACodeAndRecoveryCodes() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let (client, challenge) = try await Self.loggedIn(server)
            let enrolment = try #require(challenge["enrolment"])
            #expect(challenge["errorMsg"] == .null)
            #expect(challenge["remainingAttempts"] == 3)
            let secret = try #require(enrolment["secret"]?.stringValue)
            #expect(Base32.decode(secret)?.count == 20)
            #expect(enrolment["otpauthURI"]?.stringValue
                == "otpauth://totp/Example%20Bank:john?secret=\(secret)&issuer=Example%20Bank&algorithm=SHA1&digits=6&period=30")
            #expect(enrolment["digits"] == 6 && enrolment["period"] == 30 && enrolment["algorithm"] == "SHA1")
            // The QR code of the URI, for the app to show (QRCodeTests reads such codes back with a decoder).
            let svg = try #require(enrolment["qrCodeSVG"]?.stringValue)
            let uri = try #require(enrolment["otpauthURI"]?.stringValue)
            #expect(svg.hasPrefix("<svg") && svg == QRCode(text: uri)?.svg())

            // The same secret until the user proves it; a wrong code is counted.
            let wrong = try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": "000000x"]])
            #expect(wrong.json?["challenges"]?["TOTP"]?["errorMsg"] == "The code is not valid.")
            #expect(wrong.json?["challenges"]?["TOTP"]?["remainingAttempts"] == 2)
            #expect(wrong.json?["challenges"]?["TOTP"]?["enrolment"]?["secret"]?.stringValue == secret)

            let code = try Self.code(enrolment)
            let enrolled = try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(code)]])
            #expect(enrolled.status == 200, "\(String(decoding: enrolled.body, as: UTF8.self))")
            let recovery = try #require(enrolled.json?["successes"]?["TOTP"]?["recoveryCodes"]?.arrayValue)
            #expect(recovery.count == 3)
            #expect(recovery.allSatisfy { $0.stringValue?.count == 19 })
            #expect(enrolled.json?["successes"]?["UserLogin"]?["user"]?["id"] == "john")
            let token = try await client.obtainToken(scope: "transfers")
            #expect(token.scope.split(separator: " ").contains("transfers"))
            // Shown once: the next round's success has no codes.
            let again = try await client.preauthorize(scope: "transfers")
            #expect(again.status == 200)
            #expect(again.json?["successes"]?["TOTP"]?["recoveryCodes"] == nil)

            // Another device of john's: no enrolment now; the code just used is spent, on this node as on any.
            let (other, otherChallenge) = try await Self.loggedIn(server)
            #expect(otherChallenge["enrolment"] == nil)
            #expect(otherChallenge["recoveryCodesLeft"] == 3)
            let replayed = try await other.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(code)]])
            #expect(replayed.json?["challenges"]?["TOTP"]?["errorMsg"] == "This code was used already: wait for the next one.")

            // A recovery code works once, in any case and grouping.
            let first = try #require(recovery[0].stringValue)
            let recovered = try await other.preauthorize(scope: "transfers", answers: ["TOTP": ["recoveryCode": .string(first.lowercased())]])
            #expect(recovered.status == 200, "\(String(decoding: recovered.body, as: UTF8.self))")
            let (third, thirdChallenge) = try await Self.loggedIn(server)
            #expect(thirdChallenge["recoveryCodesLeft"] == 2)
            let reused = try await third.preauthorize(scope: "transfers", answers: ["TOTP": ["recoveryCode": .string(first)]])
            #expect(reused.json?["challenges"]?["TOTP"]?["errorMsg"] == "The recovery code is not valid.")

            // jane has her own secret: john's enrolment is not hers.
            let (_, janes) = try await Self.loggedIn(server, user: "jane")
            #expect(janes["enrolment"]?["secret"] != nil)
            #expect(janes["enrolment"]?["secret"]?.stringValue != secret)
        }
    }

    @Test func theSecondFactorBelongsToTheUserWhoLoggedIn() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let (client, challenge) = try await Self.loggedIn(server)
            let enrolled = try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(try Self.code(challenge["enrolment"]))]])
            #expect(enrolled.status == 200)
            // Logging out of the login ends the second factor's grant too: the next user starts with the login.
            #expect(try await client.logout(securityCheck: "UserLogin").status == 200)
            let next = try await client.preauthorize(scope: "transfers")
            #expect(next.status == 401)
            #expect(next.json?["challenges"]?["UserLogin"] != nil)
            #expect(next.json?["challenges"]?["TOTP"] == nil)
            // jane logs in on the same client: john's TOTP success is not hers.
            let jane = try await client.preauthorize(scope: "transfers", answers: ["UserLogin": ["username": "jane", "password": "demo"]])
            #expect(jane.status == 401)
            #expect(jane.json?["challenges"]?["TOTP"]?["enrolment"] != nil)
            // A scope of the login alone does not ask for the code.
            #expect(try await client.preauthorize(scope: "balance").status == 200)
        }
    }

    @Test func wrongCodesBlockAndAreCountedAgainstTheUser() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let (client, _) = try await Self.loggedIn(server)
            for remaining in [2, 1] {
                let wrong = try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": "123"]])
                #expect(wrong.json?["challenges"]?["TOTP"]?["remainingAttempts"] == .int(Int64(remaining)))
            }
            let blocked = try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": "123"]])
            #expect(blocked.status == 403)
            #expect(blocked.json?["failures"]?["TOTP"] == ["failure": "Account blocked"])
            // Answers without a code are told so.
            let (other, _) = try await Self.loggedIn(server)
            let empty = try await other.preauthorize(scope: "transfers", answers: ["TOTP": ["pin": "1"]])
            #expect(empty.json?["challenges"]?["TOTP"]?["errorMsg"] == "The code was not provided.")
        }
    }

    @Test func aCodeUsedOnOneNodeIsRefusedOnAnother() async throws {
        try await NodeCluster.run(nodes: 2, policy: Self.policy) { cluster in
            let nodes = cluster.nodes
            let (client, challenge) = try await Self.loggedIn(nodes[0])
            let code = try Self.code(challenge["enrolment"])
            #expect(try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(code)]]).status == 200)
            let (other, otherChallenge) = try await Self.loggedIn(nodes[1])
            #expect(otherChallenge["enrolment"] == nil, "enrolled on node 1, known on node 2")
            let replayed = try await other.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(code)]])
            #expect(replayed.json?["challenges"]?["TOTP"]?["errorMsg"] == "This code was used already: wait for the next one.")
            // The next step's code (within the window) works on node 2.
            let next = try await other.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(try Self.code(challenge["enrolment"], offset: 30_000))]])
            #expect(next.status == 200, "\(String(decoding: next.body, as: UTF8.self))")
        }
    }

    @Test func operatorsSeeEnrolmentsAndResetThem() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let (client, challenge) = try await Self.loggedIn(server)
            let secret = challenge["enrolment"]?["secret"]
            #expect(try await client.preauthorize(scope: "transfers", answers: ["TOTP": ["code": .string(try Self.code(challenge["enrolment"]))]]).status == 200)
            let reader = try await Admin.reader(server)
            let john = try await Admin.send(.GET, server, "/users/john", token: reader)
            #expect(john.status == 200)
            #expect(john.json?["displayName"] == "John Doe")
            let factor = try #require(john.json?["factors"]?.arrayValue?.first)
            #expect(factor["factor"] == "TOTP" && factor["recoveryCodesLeft"] == 3 && factor["enrolledAt"]?.intValue != nil)
            #expect(!String(decoding: john.body, as: UTF8.self).contains(try #require(secret?.stringValue)))
            #expect(try await Admin.send(.GET, server, "/users/jane", token: reader).json?["factors"] == [])
            #expect(try await Admin.send(.GET, server, "/users/nobody", token: reader).status == 404)
            // Reading is not resetting.
            #expect(try await Admin.send(.DELETE, server, "/users/john/factors/TOTP", token: reader).status == 403)
            let writer = try await Admin.writer(server)
            let reset = try await Admin.send(.DELETE, server, "/users/john/factors/TOTP", token: writer)
            #expect(reset.status == 200)
            #expect(reset.json == ["reset": "TOTP", "username": "john"])
            #expect(try await Admin.send(.DELETE, server, "/users/john/factors/TOTP", token: writer).status == 404)
            // The next login enrols a new secret.
            let (_, again) = try await Self.loggedIn(server)
            #expect(again["enrolment"]?["secret"] != nil && again["enrolment"]?["secret"] != secret)
            let audit = try await Admin.send(.GET, server, "/audit?limit=100", token: reader)
            #expect(String(decoding: audit.body, as: UTF8.self).contains("admin.user.factor.reset"))
        }
    }

    @Test func requiredChecksAreChecksOfThePolicyWithoutACycle() throws {
        func refusal(_ checks: String) -> PolicyError? {
            do {
                _ = try SecurityPolicy.parse(yaml: "securityChecks:\n" + checks + "applications: [{ id: a, platform: ios }]\n", file: "p.yaml",
                                             registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
                return nil
            } catch {
                return error as? PolicyError
            }
        }
        let cycle = refusal("""
              A: { class: UserLogin, requires: [C] }
              B: { class: TOTP, requires: [A] }
              C: { class: TOTP, requires: [B] }
            """ + "\n")
        #expect(cycle?.key == "securityChecks.A.requires")
        #expect(cycle?.problem.contains("A → C → B → A") == true, "\(String(describing: cycle))")
        #expect(refusal("  A: { class: TOTP, requires: [A] }\n")?.problem == "a check cannot require itself")
        #expect(refusal("  A: { class: TOTP, requires: [Nope] }\n")?.key == "securityChecks.A.requires[0]")
        #expect(refusal("  A: { class: TOTP, properties: { digits: 9 } }\n")?.key == "securityChecks.A.properties.digits")
        #expect(refusal("  A: { class: TOTP, properties: { algorithm: MD5 } }\n")?.key == "securityChecks.A.properties.algorithm")
        #expect(refusal("  U: { class: UserLogin }\n  A: { class: TOTP, requires: [U] }\n") == nil)
    }

    @Test func theRequiredChecksRunFirstWithTheScopeOfTheChecksNeedingThem() throws {
        let policy = try SecurityPolicy.parse(yaml: Self.policy, file: "p.yaml", registry: .builtIn,
                                              services: SecurityCheckServices(users: PolicyTests.NoUsers()))
        let application = try #require(policy.applications.first)
        let checks = try application.checks(for: Scope("transfers"))
        #expect(checks.map(\.check.name) == ["UserLogin", "TOTP"])
        #expect(checks.map(\.scope) == [["transfers"], ["transfers"]])
        let both = try application.checks(for: Scope("balance transfers"))
        #expect(both.map(\.check.name) == ["UserLogin", "TOTP"])
        #expect(both.first?.scope == ["balance", "transfers"])
    }
}
