public import GatehouseProtocol

/// What a security check knows of the client it runs for, and the client state it may change.
///
/// The server loads it before a round and stores the changes after it, together with the checks' states, as one
/// atomic update.
public struct ClientContext: Sendable {
    /// The client registration's id.
    public let clientID: String
    /// The registered application.
    public let application: ApplicationData
    /// The registered device.
    public let device: DeviceData
    /// The time of this round, epoch milliseconds.
    public let now: Int64
    /// The persistent registration context: the registered user and the attributes.
    public var registration: RegistrationContext
    /// The authorization context: the user the last user-authenticating check made active.
    public var activeUser: AuthenticatedUser?

    public init(
        clientID: String, application: ApplicationData, device: DeviceData, now: Int64,
        registration: RegistrationContext = RegistrationContext(), activeUser: AuthenticatedUser? = nil
    ) {
        self.clientID = clientID
        self.application = application
        self.device = device
        self.now = now
        self.registration = registration
        self.activeUser = activeUser
    }
}

/// The registration context of a client (MobileFirst Developer Center, “Security-check contract”: the registration context): survives every check's expiry.
public struct RegistrationContext: Codable, Sendable, Equatable {
    public var registeredUser: AuthenticatedUser?
    /// Attributes the client may see, such as `rememberedAt`.
    public var publicAttributes: JSONObject
    /// Attributes for the server only.
    public var protectedAttributes: JSONObject

    public init(registeredUser: AuthenticatedUser? = nil, publicAttributes: JSONObject = [:], protectedAttributes: JSONObject = [:]) {
        self.registeredUser = registeredUser
        self.publicAttributes = publicAttributes
        self.protectedAttributes = protectedAttributes
    }
}

extension RegistrationContext: JSONTextWritable {
    /// The stored form (the `Codable` one), written without `JSONEncoder`.
    package func write(to text: inout JSONText) {
        text.object { context in
            context.member("registeredUser", registeredUser)
            context.member("publicAttributes", members: publicAttributes)
            context.member("protectedAttributes", members: protectedAttributes)
        }
    }
}

extension RegistrationContext: JSONValueDecodable {
    /// The stored form read without `JSONDecoder`: exactly what the synthesized `Decodable` conformance reads.
    package init?(json: JSON) {
        guard case .object = json, let registeredUser = json.optional("registeredUser", as: AuthenticatedUser.self),
              case .object(let publicAttributes)? = json["publicAttributes"], case .object(let protectedAttributes)? = json["protectedAttributes"]
        else { return nil }
        self.init(registeredUser: registeredUser, publicAttributes: publicAttributes, protectedAttributes: protectedAttributes)
    }
}

/// The HTTP request a round came with, as a check may read it.
public struct CheckRequest: Sendable {
    /// Header fields with lower-cased names.
    public var headers: [String: String]
    /// The remote peer's address, when known.
    public var remoteAddress: String?

    public init(headers: [String: String] = [:], remoteAddress: String? = nil) {
        self.headers = headers
        self.remoteAddress = remoteAddress
    }
}
