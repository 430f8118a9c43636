import Foundation
@testable import GatehouseClient
import Testing

/// Where the registration is kept: owner-only files, the platform's default store.
@Suite(.timeLimit(.minutes(3))) struct SDKKeyStoreTests {
    static func permissions(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test func theFileStoreIsOwnerOnlyAndLeavesNoTemporaryFile() async throws {
        let base = URL(fileURLWithPath: TestServer.temporaryDirectory())
        let directory = base.appendingPathComponent("nested/registrations")
        let store = FileKeyStore(directory: directory, name: "app")
        try await store.save(StoredRegistration(privateKeyPEM: "-----BEGIN PRIVATE KEY-----", clientID: "one", deviceID: "d"))
        #expect(try Self.permissions(store.fileURL.path) == 0o600)
        #expect(try Self.permissions(directory.path) == 0o700, "the directory the store made is its owner's only")
        try await store.save(StoredRegistration(clientID: "two", deviceID: "d"))
        #expect(try Self.permissions(store.fileURL.path) == 0o600, "a replaced file is owner-only too")
        #expect(try await store.load()?.clientID == "two")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["app.json"], "no temporary file left")
        try await store.delete()
        #expect(try await store.load() == nil)
    }

    @Test func aKeyStoreFailureKeepsItsCause() async throws {
        let base = URL(fileURLWithPath: TestServer.temporaryDirectory())
        try FileManager.default.createDirectory(at: base.appendingPathComponent("broken.json"), withIntermediateDirectories: true)
        let store = FileKeyStore(directory: base, name: "broken")  // its "file" is a directory: unreadable
        await #expect(throws: (any Error).self) { _ = try await store.load() }
        let client = GatehouseClient(configuration: ClientConfiguration(serverURL: URL(string: "http://127.0.0.1:1")!, applicationID: "a",
                                                                        logger: SDK.quietLogger), keyStore: store)
        let error = await SDK.error { _ = try await client.register() }
        #expect(error?.code == .keyStore)
        #expect(error?.underlying != nil, "the store's own error is kept")
    }

    @Test func theDefaultStoreIsPersistentAndNamedByAppAndServer() throws {
        let configuration = ClientConfiguration(serverURL: URL(string: "https://auth.example.com:8443/x")!, applicationID: "com.sample/pin code")
        #expect(KeyStores.storeName(for: configuration) == "com.sample_pin_code@auth.example.com_8443")
        #if canImport(Security)
        #expect(KeyStores.standard(for: configuration) is KeychainKeyStore)
        #else
        let store = try #require(KeyStores.standard(for: configuration) as? FileKeyStore)
        #expect(store.fileURL.lastPathComponent == "com.sample_pin_code@auth.example.com_8443.json")
        #expect(store.fileURL.deletingLastPathComponent().lastPathComponent == "gatehouse")
        #endif
        // A client made without a store gets the default one, never an in-memory one.
        let client = GatehouseClient(configuration: configuration)
        #expect(!(client.keyStore is InMemoryKeyStore))
    }
}
