import Foundation
import GatehouseClient
import Testing

/// The seam for app tests (issue 36): code written against `GatehouseClientProtocol` runs with the real client
/// against a real server, and with `GatehouseClientDouble` without one.
@Suite(.timeLimit(.minutes(3))) struct SDKClientProtocolTests {
    /// An app's view model, written against the protocol.
    struct BalanceModel {
        let client: any GatehouseClientProtocol

        func balance() async -> String {
            do {
                return try await client.sendResource(path: SDK.balancePath, method: .get, body: .none, scope: nil).text
            } catch where error.code == .challengeCancelled {
                return "cancelled"
            } catch {
                return "error"
            }
        }
    }

    @Test func theModelRunsOnTheRealClientAndOnTheDouble() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            try client.registerChallengeHandler(SDK.pinHandler(Calls<JSONObject>()))
            #expect(await BalanceModel(client: client).balance().contains("19938.80"))
        }
        let double = GatehouseClientDouble()
        double.resources["GET \(SDK.balancePath)"] = .success(ResourceResponse(status: 200, headers: [:], body: Data("42.00".utf8)))
        #expect(await BalanceModel(client: double).balance() == "42.00")
        double.resources["GET \(SDK.balancePath)"] = .failure(.challengeCancelled(securityCheck: "PinCodeAttempts"))
        #expect(await BalanceModel(client: double).balance() == "cancelled")
        #expect(double.calls == ["GET \(SDK.balancePath)", "GET \(SDK.balancePath)"])
        // Tokens and logins: canned, or a default.
        double.tokens["accessRestricted"] = .failure(.securityCheckFailed(failures: ["PinCodeAttempts": ["failure": "Account blocked"]]))
        await #expect(throws: GatehouseClientError.self) { _ = try await double.obtainAccessToken(forScope: "accessRestricted") }
        #expect(try await double.obtainAccessToken(forScope: nil).scope == "RegisteredClient")
        #expect(try await double.login(securityCheck: "UserLogin", credentials: [:]).isEmpty)
        try await double.logout(securityCheck: "UserLogin")
        #expect(double.calls.suffix(4) == ["token accessRestricted", "token RegisteredClient", "login UserLogin", "logout UserLogin"])
    }
}
