import Foundation
import GatehouseProtocol

/// Registration (MobileFirst runtime REST API `registration/v1/self`): on first use a key pair and `POST registration/v1/self`; when the registration
/// data changed (a new app version, ...) `PUT registration/v1/self/{clientId}` signed with the same key; after
/// the server forgot the client, a wipe and a fresh registration.
actor Registrar {
    let api: RuntimeAPI
    let keyStore: any KeyStore
    private var stored = StoredRegistration()
    private var key: ClientKeyPair?
    private var loaded = false
    private var pending: SharedFlow<ClientIdentity>?

    init(api: RuntimeAPI, keyStore: any KeyStore) {
        self.api = api
        self.keyStore = keyStore
    }

    /// The client's identity, registering or updating the registration first when needed. Concurrent callers
    /// share one registration; each leaves at once when its task is cancelled, and the registration is cancelled
    /// when the last one leaves.
    func identity() async throws(GatehouseClientError) -> ClientIdentity {
        guard !Task.isCancelled else { throw .cancelled(underlying: CancellationError()) }
        if let pending, let ticket = pending.join() { return try await pending.value(ticket).get() }
        let flow = SharedFlow { await self.resolve() }
        pending = flow
        guard let ticket = flow.join() else { throw .cancelled }
        let result = await flow.value(ticket)
        if pending === flow, flow.isFinished { pending = nil }
        return try result.get()
    }

    /// The identity if the client is registered, without talking to the server.
    func existingIdentity() async throws(GatehouseClientError) -> ClientIdentity? {
        try await load()
        guard let clientID = stored.clientID, let key else { return nil }
        return ClientIdentity(clientID: clientID, key: key)
    }

    /// Forgets the client id, the key pair and the registered data (the generated device id stays).
    func wipe() async throws(GatehouseClientError) {
        try await load()
        stored = StoredRegistration(deviceID: stored.deviceID, deviceDisplayName: stored.deviceDisplayName)
        key = nil
        try await persist()
    }

    /// The registration data of this client now.
    func currentData() async throws(GatehouseClientError) -> RegistrationData {
        try await load()
        let configuration = api.configuration
        var device = configuration.device ?? DeviceData(
            id: stored.deviceID ?? UUID().uuidString, hardware: Self.hardware, platform: Self.operatingSystem, deviceDisplayName: nil)
        if let name = stored.deviceDisplayName { device.deviceDisplayName = name }
        return RegistrationData(device: device, application: configuration.application, attributes: ["sdk_protocol_version": 1])
    }

    /// Keeps the device's display name (`nil` clears it); the registration is updated at once when the client is
    /// registered, else at its registration.
    func setDeviceDisplayName(_ name: String?) async throws(GatehouseClientError) {
        try await load()
        guard stored.deviceDisplayName != name else { return }
        stored.deviceDisplayName = name
        try await persist()
        if stored.clientID != nil { _ = try await identity() }
    }

    /// The access tokens kept with the registration (none without a registration).
    func storedTokens() async throws(GatehouseClientError) -> [AccessToken] {
        try await load()
        return stored.clientID == nil ? [] : stored.tokens ?? []
    }

    /// Keeps `tokens` with the registration (nothing without one); written only when they changed.
    func storeTokens(_ tokens: [AccessToken]) async throws(GatehouseClientError) {
        try await load()
        guard stored.clientID != nil, (stored.tokens ?? []) != tokens else { return }
        stored.tokens = tokens.isEmpty ? nil : tokens
        try await persist()
    }

    /// The device's display name the app set, if any.
    func deviceDisplayName() async throws(GatehouseClientError) -> String? {
        try await load()
        return stored.deviceDisplayName
    }

    private func resolve() async -> Result<ClientIdentity, GatehouseClientError> {
        do throws(GatehouseClientError) {
            try await load()
            let current = try await currentData()
            if let clientID = stored.clientID, let key {
                if stored.registrationData == current { return .success(ClientIdentity(clientID: clientID, key: key)) }
                if try await update(clientID: clientID, key: key, data: current) {
                    return .success(ClientIdentity(clientID: clientID, key: key))
                }
                try await wipe()
            }
            return .success(try await register(current))
        } catch {
            return .failure(error)
        }
    }

    /// `PUT registration/v1/self/{clientId}`; `false` when the server no longer knows the client.
    private func update(clientID: String, key: ClientKeyPair, data: RegistrationData) async throws(GatehouseClientError) -> Bool {
        let response = try await api.sendJSON("PUT", "registration/v1/self/\(FormEncoding.escape(clientID))", try signed(data, key: key, kid: clientID))
        switch response.status {
        case 200..<300:
            stored.registrationData = data
            try await persist()
            return true
        case 400, 403, 404:
            // Unknown client, or a registration the server refuses to update: register afresh, as the MobileFirst SDKs do.
            return false
        default:
            throw RuntimeAPI.error(from: response).asRegistrationFailure()
        }
    }

    /// `POST registration/v1/self` with a new key pair.
    private func register(_ data: RegistrationData) async throws(GatehouseClientError) -> ClientIdentity {
        let key = try await Self.generateKey()
        let response = try await api.sendJSON("POST", "registration/v1/self", try signed(data, key: key, kid: nil))
        guard response.status == 201 || response.status == 200 else {
            throw RuntimeAPI.error(from: response).asRegistrationFailure()
        }
        let fromLocation = response.header("Location").flatMap { $0.split(separator: "/").last.map(String.init) }
        let fromBody = (try? JSONDecoder().decode(JSON.self, from: response.body))?["clientId"]?.stringValue
        guard let clientID = fromLocation ?? fromBody, !clientID.isEmpty else {
            throw .registrationFailed(status: response.status, errorCode: nil, message: "the answer names no client id (Location)")
        }
        self.key = key
        stored = StoredRegistration(privateKeyPEM: key.pem, clientID: clientID, registrationData: data, deviceID: data.device.id,
                                    deviceDisplayName: stored.deviceDisplayName)
        try await persist()
        api.observer.report(GatehouseEvent(.registered, clientID: clientID))
        return ClientIdentity(clientID: clientID, key: key)
    }

    /// A new 2048-bit key pair, generated off the cooperative thread pool (it takes a noticeable time).
    private static func generateKey() async throws(GatehouseClientError) -> ClientKeyPair {
        let result: Result<ClientKeyPair, GatehouseClientError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    continuation.resume(returning: .success(try ClientKeyPair()))
                } catch {
                    continuation.resume(returning: .failure(.keyStore("cannot generate a key pair", underlying: error)))
                }
            }
        }
        return try result.get()
    }

    private func signed(_ data: RegistrationData, key: ClientKeyPair, kid: String?) throws(GatehouseClientError) -> RegistrationRequest {
        do {
            return RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: key, kid: kid))
        } catch {
            throw .invalidArgument("cannot sign the registration data: \(error)")
        }
    }

    private func load() async throws(GatehouseClientError) {
        guard !loaded else { return }
        do {
            stored = try await keyStore.load() ?? StoredRegistration()
        } catch {
            throw .keyStore("cannot read the key store", underlying: error)
        }
        if let pem = stored.privateKeyPEM {
            key = try? ClientKeyPair(pem: pem)
        }
        if key == nil { stored.clientID = nil }
        if api.configuration.device == nil && stored.deviceID == nil {
            stored.deviceID = UUID().uuidString
        }
        loaded = true
    }

    private func persist() async throws(GatehouseClientError) {
        do {
            try await keyStore.save(stored)
        } catch {
            throw .keyStore("cannot write the key store", underlying: error)
        }
    }

    private static var hardware: String {
        var info = utsname()
        uname(&info)
        return withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    private static var operatingSystem: String {
        #if os(Linux)
        "linux \(ProcessInfo.processInfo.operatingSystemVersionString)"
        #else
        ProcessInfo.processInfo.operatingSystemVersionString
        #endif
    }
}
