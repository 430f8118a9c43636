import GatehouseProtocol

/// What a client keeps between runs: its key pair, the client id the server gave it, and the data it registered.
public struct StoredRegistration: Codable, Sendable, Equatable {
    /// The client's RSA private key (PKCS#1 or PKCS#8 PEM).
    public var privateKeyPEM: String?
    /// The client id, once registered.
    public var clientID: String?
    /// The registration data the server holds for this client; when the current data differ (a new app
    /// version, another display name), the client updates its registration.
    public var registrationData: RegistrationData?
    /// The generated device id (kept across re-registrations), when the configuration names no device.
    public var deviceID: String?
    /// The device's display name the app set (``GatehouseClient/setDeviceDisplayName(_:)``), kept across
    /// re-registrations; operators find the device by it.
    public var deviceDisplayName: String?
    /// The access tokens kept when ``ClientConfiguration/persistsTokens`` is on (the registration's own, so they go
    /// with it when it is wiped).
    public var tokens: [AccessToken]?

    /// A stored registration; see the properties.
    public init(privateKeyPEM: String? = nil, clientID: String? = nil, registrationData: RegistrationData? = nil, deviceID: String? = nil,
                deviceDisplayName: String? = nil) {
        self.privateKeyPEM = privateKeyPEM
        self.clientID = clientID
        self.registrationData = registrationData
        self.deviceID = deviceID
        self.deviceDisplayName = deviceDisplayName
    }
}

/// Where a client keeps its ``StoredRegistration``. `KeychainKeyStore` keeps it in the Keychain (the default on
/// Apple platforms), ``FileKeyStore`` in an owner-only file (the default elsewhere), ``InMemoryKeyStore`` in memory
/// (tests: a new registration per process).
public protocol KeyStore: Sendable {
    /// The stored registration, or `nil` when there is none.
    func load() async throws -> StoredRegistration?
    /// Replaces the stored registration.
    func save(_ registration: StoredRegistration) async throws
    /// Forgets the stored registration.
    func delete() async throws
}
