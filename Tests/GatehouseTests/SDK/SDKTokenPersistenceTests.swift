import Foundation
import GatehouseClient
import Testing

/// Tokens that survive a launch (issue 36), opt-in: with `persistsTokens`, a new client object on the same key store
/// (an app started again) uses the token the last one obtained, without a challenge; an expired one is not used; a
/// wipe forgets them; without the option nothing is kept.
@Suite(.timeLimit(.minutes(3))) struct SDKTokenPersistenceTests {
    static func client(_ server: TestServer, directory: URL, persists: Bool, app: String = SDK.pinApp, pins: Calls<JSONObject>) throws -> GatehouseClient {
        var configuration = ClientConfiguration(
            serverURL: URL(string: server.baseURL)!, applicationID: app, platform: "ios", version: "1.0",
            device: DeviceData(id: "persistence-phone", hardware: "TestPhone", platform: "ios 18"), logger: SDK.quietLogger)
        configuration.persistsTokens = persists
        let client = GatehouseClient(configuration: configuration, keyStore: FileKeyStore(directory: directory), transport: URLSessionTransport())
        try client.registerChallengeHandler(SDK.pinHandler(pins))
        return client
    }

    @Test func aNewClientOnTheSameStoreUsesTheKeptTokenUntilItExpires() async throws {
        let directory = URL(fileURLWithPath: TestServer.temporaryDirectory())
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.run { server in
            let pins = Calls<JSONObject>()
            let first = try await Self.client(server, directory: directory, persists: true, pins: pins).obtainAccessToken(forScope: "accessRestricted")
            #expect(pins.count == 1)
            // The app starts again: a new client object on the same store.
            let again = try Self.client(server, directory: directory, persists: true, pins: pins)
            let reused = try await again.obtainAccessToken(forScope: "accessRestricted")
            #expect(reused.value == first.value && pins.count == 1, "no challenge, the same token")
            let balance = try await again.resourceRequest(path: SDK.balancePath, scope: "accessRestricted").send()
            #expect(balance.status == 200)
            // Cleared: not kept either.
            await again.clearAccessToken(reused)
            let third = try Self.client(server, directory: directory, persists: true, pins: pins)
            let fresh = try await third.obtainAccessToken(forScope: "accessRestricted")
            #expect(fresh.value != first.value)
            // Without the option, nothing is read or kept.
            let plain = try Self.client(server, directory: directory, persists: false, pins: pins)
            #expect(try await plain.obtainAccessToken(forScope: "accessRestricted").value != fresh.value)
        }
    }

    @Test func anExpiredKeptTokenIsNotUsed() async throws {
        let directory = URL(fileURLWithPath: TestServer.temporaryDirectory())
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.run { server in
            let pins = Calls<JSONObject>()
            // com.sample.tiny's tokens last 2 s.
            let first = try await Self.client(server, directory: directory, persists: true, app: "com.sample.tiny", pins: pins)
                .obtainAccessToken(forScope: "accessRestricted")
            try await Task.sleep(for: .milliseconds(2300))
            let later = try await Self.client(server, directory: directory, persists: true, app: "com.sample.tiny", pins: pins)
                .obtainAccessToken(forScope: "accessRestricted")
            #expect(later.value != first.value && !later.isExpired)
            let stored = try await FileKeyStore(directory: directory).load()
            #expect(stored?.tokens?.map(\.value) == [later.value], "the expired token is not kept")
        }
    }
}
