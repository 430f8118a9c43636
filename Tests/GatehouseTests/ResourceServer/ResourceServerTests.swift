import BalanceService
import Foundation
import GatehouseProtocol
import GatehouseResourceServer
import Testing

/// The resource-server middleware protecting a service that trusts Gatehouse.
@Suite(.timeLimit(.minutes(3))) struct ResourceServerTests {
    static func get(_ service: RunningApp, _ path: String, token: String?) async throws -> TestResponse {
        try await HTTP.send(.GET, "http://127.0.0.1:\(service.port)\(path)", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    @Test func localValidationNeedsNoCallToGatehousePerRequest() async throws {
        let (service, good, registered) = try await TestServer.run { server in
            let verifier = LocalTokenVerifier(jwksURL: server.baseURL + "/.well-known/jwks.json", minimumRefreshInterval: .milliseconds(1))
            let service = try await RunningApp.start(router: BalanceService.router(verifier: verifier))
            let client = try await TokenTests.pinClient(server)
            let good = try await client.obtainToken(scope: "accessRestricted").access_token
            let registered = try await client.obtainToken(scope: nil).access_token
            let first = try await Self.get(service, "/balance", token: good)
            #expect(first.status == 200)
            #expect(String(decoding: first.body, as: UTF8.self) == "19938.80 for client \(client.clientID!)")
            return (service, good, registered)
        }
        // Gatehouse has stopped: the service still validates tokens with the keys it has.
        for _ in 0..<20 {
            #expect(try await Self.get(service, "/balance", token: good).status == 200)
        }
        let none = try await Self.get(service, "/balance", token: nil)
        #expect(none.status == 401)
        #expect(none.header("WWW-Authenticate") == "Bearer")
        let insufficient = try await Self.get(service, "/balance", token: registered)
        #expect(insufficient.status == 403)
        #expect(insufficient.header("WWW-Authenticate") == "Bearer error=\"insufficient_scope\", scope=\"RegisteredClient accessRestricted\"")
        let garbage = try await Self.get(service, "/balance", token: "e30.e30.sig")
        #expect(garbage.status == 401)
        #expect(garbage.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
        #expect(try await Self.get(service, "/hello", token: nil).status == 200)
        await service.stop()
    }

    @Test func keyRotationIsPickedUpAndForeignKidsRefused() async throws {
        try await TestServer.run { server in
            let verifier = LocalTokenVerifier(jwksURL: server.baseURL + "/.well-known/jwks.json", minimumRefreshInterval: .milliseconds(1))
            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted").access_token
            // A token whose kid the server never published is refused after one refresh.
            let parts = token.split(separator: ".").map(String.init)
            let foreignHeader = Base64URL.encode(Data(#"{"alg":"ES256","typ":"JWT","kid":"rotated-away"}"#.utf8))
            await #expect(throws: TokenRejection.invalidToken) { try await verifier.verify("\(foreignHeader).\(parts[1]).\(parts[2])") }
            // The published key verifies, fetched on first sight of its kid.
            #expect(try await verifier.verify(token).scope == Scope("accessRestricted"))
        }
    }

    @Test func introspectionSeesLogoutAtOnce() async throws {
        try await TestServer.run { server in
            let verifier = IntrospectionTokenVerifier(serverURL: server.baseURL, clientID: "balance-service", secret: "s3cret")
            let service = try await RunningApp.start(router: BalanceService.router(verifier: verifier))
            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted").access_token
            #expect(try await Self.get(service, "/balance", token: token).status == 200)
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            let after = try await Self.get(service, "/balance", token: token)
            #expect(after.status == 401)
            #expect(after.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
            let wrongCredentials = IntrospectionTokenVerifier(serverURL: server.baseURL, clientID: "balance-service", secret: "wrong")
            await #expect(throws: TokenRejection.invalidToken) { try await wrongCredentials.verify(token) }
            await service.stop()
        }
    }
}
