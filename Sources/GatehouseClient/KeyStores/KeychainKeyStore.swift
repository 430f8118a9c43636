// Apple-only: compiled into GatehouseClient where Security exists, and on Linux into GatehouseClientAppleAdapters
// (Tests/AppleStandIns) against a stand-in of the Security API it calls, where AppleAdapterTests runs it.
#if canImport(Security) || APPLE_STAND_INS
public import Foundation
#if canImport(Security)
public import Security
#else
public import SecurityStandIn
#endif
#if APPLE_STAND_INS
public import GatehouseClient
#endif

/// A ``KeyStore`` in the Keychain (Apple platforms): the registration as one generic-password item, readable
/// after the device's first unlock and never leaving it (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: not
/// in backups, not synchronised through iCloud). The default store on Apple platforms.
public struct KeychainKeyStore: KeyStore {
    /// The item's service (`kSecAttrService`).
    public let service: String
    /// The item's account (`kSecAttrAccount`).
    public let account: String
    /// The Keychain access group shared with app extensions, if any.
    public let accessGroup: String?

    /// The item of `service` and `account` (in `accessGroup`, when given).
    public init(service: String = "gatehouse.registration", account: String, accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// Why the Keychain refused.
    public struct KeychainError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The `OSStatus`.
        public let status: OSStatus
        /// The status and its message.
        public var description: String {
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "unknown"
            return "Keychain error \(status): \(message)"
        }
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// Reads the item; `nil` when there is none.
    public func load() async throws -> StoredRegistration? {
        var request = query
        request[kSecReturnData as String] = true
        request[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(request as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        return try JSONDecoder().decode(StoredRegistration.self, from: data)
    }

    /// Adds or replaces the item.
    public func save(_ registration: StoredRegistration) async throws {
        let data = try JSONEncoder().encode(registration)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    /// Removes the item.
    public func delete() async throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }
}
#endif
