import Foundation
@testable import GatehouseGateway
import GatehouseResourceServer
import HTTPTypes
import Testing

/// A token realm admits a token its verifier remembers on the connection's event loop
/// (``GatehouseTokenLoginModule/cachedLogin(_:scheme:)``), deciding exactly as the chain on a task does.
@Suite(.timeLimit(.minutes(3))) struct GatewayTokenOnLoopTests {
    @Test func aVerifiedTokenIsAdmittedOnTheEventLoop() async throws {
        try await TestServer.run { server async throws in
            let configuration = GatewayConfiguration(
                realms: [GatewayTokenTests.tokenRealm(server)],
                services: [ServiceConfiguration(name: "t", path: "/t", upstream: "http://127.0.0.1:9", realm: "tokens", requireRoles: ["accessRestricted"])])
            let gateway = try Gateway(configuration: configuration, logger: GatewayFixture.logger)
            let (service, _) = try #require(gateway.route(try RequestTarget(parsing: "/t/x")))
            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted").access_token
            let headers: HTTPFields = [.authorization: "Token \(token)"]

            // Not verified yet (the key set not even fetched): the chain runs on a task.
            #expect(gateway.admitNow(AdmissionRequest(fields: headers, query: nil, service: service)) == nil)
            guard case .allow(let subject) = await gateway.admit(AdmissionRequest(fields: headers, query: nil, service: service)) else {
                Issue.record("the token was refused")
                return
            }
            // Verified once: admitted on the loop from then on, with the same subject, and remembered by the
            // connection until the token expires.
            guard case .allow(let again) = gateway.admitNow(AdmissionRequest(fields: headers, query: nil, service: service)) else {
                Issue.record("the verified token was not admitted on the loop")
                return
            }
            #expect(again == subject)
            let expiry = try #require(subject?.expiresAt)
            #expect(subject?.roles.contains("accessRestricted") == true)
            // (A password failing in another test meanwhile resets a memory: a few tries for one that admits now.)
            var remembered: RememberedAdmission?
            for _ in 0..<20 where remembered == nil {
                let made = try #require(gateway.admitNowRemembering(AdmissionRequest(fields: headers, query: nil, service: service))?.remembered)
                if made.admits(headers, to: service) { remembered = made }
            }
            let memory = try #require(remembered)
            #expect(memory.subject == subject)
            #expect(memory.until <= ContinuousClock.now.advanced(by: .seconds(expiry.timeIntervalSinceNow + 1)))
            #expect(memory.until >= ContinuousClock.now.advanced(by: .seconds(expiry.timeIntervalSinceNow - 5)))
            #expect(!memory.admits([.authorization: "Token \(GatewayTokenTests.foreign(token))"], to: service))
            #expect(!memory.admits(headers, to: service, now: memory.until))
            // An expired subject is never admitted again, whatever the memory's end says.
            var expired = memory.subject
            expired.expiresAt = Date(timeIntervalSinceNow: -1)
            let stale = RememberedAdmission(service: service, authorization: memory.authorization, subject: expired, until: memory.until,
                                            failures: UnsettledAccounts.shared.failures)
            #expect(!stale.admits(headers, to: service))

            // A token without the service's role: 403 on the loop as on the task.
            let registered: HTTPFields = [.authorization: "Token \(try await client.obtainToken(scope: nil).access_token)"]
            guard case .answer(let onTask) = await gateway.admit(AdmissionRequest(fields: registered, query: nil, service: service)),
                  case .answer(let onLoop) = gateway.admitNow(AdmissionRequest(fields: registered, query: nil, service: service)) else {
                Issue.record("a token without the role was admitted")
                return
            }
            #expect(onTask.status == .forbidden && onLoop.status == .forbidden)

            // A forged signature is never remembered: every try goes to the chain, and is refused there.
            let forged: HTTPFields = [.authorization: "Token \(GatewayTokenTests.foreign(token))"]
            for _ in 0..<2 {
                guard case .answer(let refused) = await gateway.admit(AdmissionRequest(fields: forged, query: nil, service: service)) else {
                    Issue.record("a forged token was admitted")
                    return
                }
                #expect(refused.status == .unauthorized)
                #expect(gateway.admitNow(AdmissionRequest(fields: forged, query: nil, service: service)) == nil)
            }
            // No token at all: challenged on the loop.
            guard case .answer(let challenge) = gateway.admitNow(AdmissionRequest(fields: [:], query: nil, service: service)) else {
                Issue.record("a request without a token was not challenged on the loop")
                return
            }
            #expect(challenge.status == .unauthorized)
        }
    }

    @Test func anIntrospectionAnswerKeptForAWhileIsAnsweredOnTheLoopButNotRememberedByTheConnection() async throws {
        try await TestServer.run { server async throws in
            let verifier = IntrospectionTokenVerifier(serverURL: server.baseURL, clientID: "balance-service", secret: "s3cret", cacheDuration: 30)
            let configuration = GatewayConfiguration(
                realms: [RealmConfiguration(name: "tokens", scheme: .applicationToken, loginModules: [LoginModuleConfiguration(type: "kept")])],
                services: [ServiceConfiguration(name: "t", path: "/t", upstream: "http://127.0.0.1:9", realm: "tokens", requireRoles: ["accessRestricted"])])
            let gateway = try Gateway(configuration: configuration, customModules: ["kept": GatehouseTokenLoginModule(verifier: verifier)],
                                      logger: GatewayFixture.logger)
            let (service, _) = try #require(gateway.route(try RequestTarget(parsing: "/t/x")))
            let token = try await TokenTests.pinClient(server).obtainToken(scope: "accessRestricted").access_token
            let headers: HTTPFields = [.authorization: "Token \(token)"]
            #expect(verifier.rememberedVerification(of: token) == nil)
            #expect(gateway.admitNow(AdmissionRequest(fields: headers, query: nil, service: service)) == nil)
            guard case .allow = await gateway.admit(AdmissionRequest(fields: headers, query: nil, service: service)) else {
                Issue.record("the token was refused")
                return
            }
            // Kept for 30 s, less than the token lives: answered on the loop, each request checking that end again.
            let kept = try #require(verifier.rememberedVerification(of: token))
            #expect(kept.until < kept.token.expiresAt && kept.until <= Date(timeIntervalSinceNow: 30))
            let now = try #require(gateway.admitNowRemembering(AdmissionRequest(fields: headers, query: nil, service: service)))
            guard case .allow = now.admission else {
                Issue.record("the kept answer was not used on the loop")
                return
            }
            #expect(now.remembered == nil)
        }
    }
}
