/// `POST registration/v1/self` body: the registration data signed by the client's key.
public struct RegistrationRequest: Codable, Sendable {
    public var signedRegistrationData: JWS
    public init(signedRegistrationData: JWS) { self.signedRegistrationData = signedRegistrationData }
}

extension RegistrationRequest: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let data = json["signedRegistrationData"], let signed = JWS(json: data) else { return nil }
        self.init(signedRegistrationData: signed)
    }
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

extension RegistrationData: JSONTextWritable {
    package func write(to text: inout JSONText) {
        text.object { data in
            data.member("device", device)
            data.member("application", application)
            data.member("attributes", members: attributes)
        }
    }
}

extension RegistrationData: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let device = json["device"].flatMap(DeviceData.init(json:)),
              let application = json["application"].flatMap(ApplicationData.init(json:)), let attributes = json.optionalObject("attributes")
        else { return nil }
        self.init(device: device, application: application, attributes: attributes)
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

extension DeviceData: JSONTextWritable {
    package func write(to text: inout JSONText) {
        text.object { device in
            device.member("id", id)
            device.member("hardware", hardware)
            device.member("platform", platform)
            device.member("deviceDisplayName", deviceDisplayName)
        }
    }
}

extension DeviceData: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let id = json.requiredString("id"), let hardware = json.optionalString("hardware"),
              let platform = json.optionalString("platform"), let name = json.optionalString("deviceDisplayName")
        else { return nil }
        self.init(id: id, hardware: hardware, platform: platform, deviceDisplayName: name)
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

extension ApplicationData: JSONTextWritable {
    package func write(to text: inout JSONText) {
        text.object { application in
            application.member("id", id)
            application.member("clientPlatform", clientPlatform)
            application.member("version", version)
        }
    }
}

extension ApplicationData: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let id = json.requiredString("id"), let platform = json.requiredString("clientPlatform"),
              let version = json.optionalString("version")
        else { return nil }
        self.init(id: id, clientPlatform: platform, version: version)
    }
}
