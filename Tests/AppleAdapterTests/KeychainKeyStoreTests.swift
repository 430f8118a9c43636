import Foundation
@testable import GatehouseClient
@testable import GatehouseClientAppleAdapters
import SecurityStandIn
import Testing

/// `KeychainKeyStore`, the default key store on Apple platforms, compiled from its own file against the stand-in of
/// Security's keychain API (Tests/AppleStandIns) and run as an iOS app runs it: add, read, update, delete, wipe; the
/// access group and the accessibility it asks for; the Keychain's refusals reported.
@Suite(.timeLimit(.minutes(1)), .serialized) struct KeychainKeyStoreTests {
    init() { StandInKeychain.reset() }

    @Test func addsReadsUpdatesAndDeletesOneItem() async throws {
        let store = KeychainKeyStore(account: "com.sample.app@gatehouse.example")
        #expect(try await store.load() == nil)

        try await store.save(StoredRegistration(privateKeyPEM: "-----BEGIN PRIVATE KEY-----", clientID: "one", deviceID: "device"))
        #expect(try await store.load()?.clientID == "one")
        #expect(StandInKeychain.items.count == 1)

        // A second save updates the item (SecItemUpdate) rather than adding a duplicate.
        try await store.save(StoredRegistration(clientID: "two", deviceID: "device"))
        #expect(try await store.load() == StoredRegistration(clientID: "two", deviceID: "device"))
        #expect(StandInKeychain.items.count == 1)

        try await store.delete()
        #expect(try await store.load() == nil)
        #expect(StandInKeychain.items.isEmpty)
        // Deleting what is not there is no error (a wipe of a fresh install).
        try await store.delete()
    }

    @Test func theItemIsAGenericPasswordThatStaysOnTheDevice() async throws {
        try await KeychainKeyStore(service: "gatehouse.registration", account: "app@host").save(StoredRegistration(clientID: "c"))
        let item = try #require(StandInKeychain.items.first)
        #expect(item[kSecClass] as? String == kSecClassGenericPassword)
        #expect(item[kSecAttrService] as? String == "gatehouse.registration")
        #expect(item[kSecAttrAccount] as? String == "app@host")
        // Readable after the first unlock (a background refresh), never in backups nor synchronised.
        #expect(item[kSecAttrAccessible] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
        #expect(item[kSecAttrAccessGroup] as? String == StandInKeychain.defaultAccessGroup)
        let stored = try JSONDecoder().decode(StoredRegistration.self, from: try #require(item[kSecValueData] as? Data))
        #expect(stored.clientID == "c")
    }

    @Test func accessGroupsAndAccountsKeepTheirOwnItems() async throws {
        let app = KeychainKeyStore(account: "app@host")
        let shared = KeychainKeyStore(account: "app@host", accessGroup: "TEAMID.org.gatehouse.shared")
        let other = KeychainKeyStore(account: "other@host")
        try await app.save(StoredRegistration(clientID: "app"))
        try await shared.save(StoredRegistration(clientID: "extension"))
        try await other.save(StoredRegistration(clientID: "other"))
        #expect(try await shared.load()?.clientID == "extension")
        #expect(try await other.load()?.clientID == "other")
        #expect(StandInKeychain.items.count == 3)
        try await shared.delete()
        #expect(try await shared.load() == nil)
        #expect(try await other.load()?.clientID == "other")
    }

    @Test func aRefusalIsReportedWithItsStatus() async throws {
        let store = KeychainKeyStore(account: "app@host")
        StandInKeychain.failNextCall(with: errSecInteractionNotAllowed)
        await #expect(throws: KeychainKeyStore.KeychainError(status: errSecInteractionNotAllowed)) { try await store.load() }
        StandInKeychain.failNextCall(with: errSecInteractionNotAllowed)
        await #expect(throws: KeychainKeyStore.KeychainError.self) { try await store.save(StoredRegistration(clientID: "c")) }
        #expect(KeychainKeyStore.KeychainError(status: errSecInteractionNotAllowed).description.contains("not allowed"))
        // A damaged item is an error, not a fresh install.
        _ = SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "gatehouse.registration", kSecAttrAccount: "app@host",
                        kSecValueData: Data("not json".utf8)], nil)
        await #expect(throws: (any Error).self) { try await store.load() }
    }
}
