public import GatehouseProtocol

/// A user authenticated by a security check (MobileFirst's `AuthenticatedUser`, Developer Center “Implementing the UserAuthenticationSecurityCheck”).
///
/// Clients see it as the `user` member of the check's success:
/// `{"id":"john","displayName":"john","authenticatedAt":1455803338008,"authenticatedBy":"UserLogin","attributes":{}}`.
public struct AuthenticatedUser: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    /// Epoch milliseconds.
    public var authenticatedAt: Int64
    /// The name of the check that authenticated the user.
    public var authenticatedBy: String
    public var attributes: [String: String]

    public init(id: String, displayName: String, authenticatedAt: Int64, authenticatedBy: String, attributes: [String: String] = [:]) {
        self.id = id
        self.displayName = displayName
        self.authenticatedAt = authenticatedAt
        self.authenticatedBy = authenticatedBy
        self.attributes = attributes
    }

    /// The user as a JSON value, for success data and introspection.
    public var json: JSON {
        .object([
            "id": .string(id), "displayName": .string(displayName), "authenticatedAt": .int(authenticatedAt),
            "authenticatedBy": .string(authenticatedBy), "attributes": .object(attributes.mapValues(JSON.string)),
        ])
    }
}

extension AuthenticatedUser: JSONTextWritable {
    /// The stored form (the `Codable` one), written without `JSONEncoder`.
    package func write(to text: inout JSONText) {
        text.object { user in
            user.member("id", id)
            user.member("displayName", displayName)
            user.member("authenticatedAt", authenticatedAt)
            user.member("authenticatedBy", authenticatedBy)
            user.member("attributes", members: attributes)
        }
    }
}

extension AuthenticatedUser: JSONValueDecodable {
    /// The stored form read without `JSONDecoder`: exactly what the synthesized `Decodable` conformance reads.
    package init?(json: JSON) {
        guard case .object = json, let id = json.requiredString("id"), let displayName = json.requiredString("displayName"),
              case .int(let authenticatedAt)? = json["authenticatedAt"], let authenticatedBy = json.requiredString("authenticatedBy"),
              case .object(let members)? = json["attributes"]
        else { return nil }
        var attributes: [String: String] = [:]
        attributes.reserveCapacity(members.count)
        for (name, value) in members {
            guard case .string(let text) = value else { return nil }
            attributes[name] = text
        }
        self.init(id: id, displayName: displayName, authenticatedAt: authenticatedAt, authenticatedBy: authenticatedBy, attributes: attributes)
    }
}
