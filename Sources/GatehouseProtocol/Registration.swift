/// `POST registration/v1/self` body: the registration data signed by the client's key.
public struct RegistrationRequest: Codable, Sendable {
    public var signedRegistrationData: JWS
    public init(signedRegistrationData: JWS) { self.signedRegistrationData = signedRegistrationData }
}

/// What a client registers: its device, its application and free attributes (the JWS payload).
public struct RegistrationData: Codable, Sendable, Equatable {
    public var device: DeviceData
    public var application: ApplicationData
    public var attributes: JSONObject?

    public init(device: DeviceData, application: ApplicationData, attributes: JSONObject? = nil) {
        self.device = device
        self.application = application
        self.attributes = attributes
    }
}

/// The device part of the registration data.
public struct DeviceData: Codable, Sendable, Equatable {
    public var id: String
    public var hardware: String?
    public var platform: String?
    public var deviceDisplayName: String?

    public init(id: String, hardware: String? = nil, platform: String? = nil, deviceDisplayName: String? = nil) {
        self.id = id
        self.hardware = hardware
        self.platform = platform
        self.deviceDisplayName = deviceDisplayName
    }
}

/// The application part of the registration data: `{"id":..,"clientPlatform":..,"version":..}`.
///
/// The MobileFirst web SDK sends no `version` (`ibmmfpf.js`), so it is optional.
public struct ApplicationData: Codable, Sendable, Hashable {
    public var id: String
    public var clientPlatform: String
    public var version: String?

    public init(id: String, clientPlatform: String, version: String?) {
        self.id = id
        self.clientPlatform = clientPlatform
        self.version = version
    }
}
