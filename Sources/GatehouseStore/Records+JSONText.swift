import GatehouseProtocol

// The records a flow writes (its registration, its authorization code, its audit events) as JSON written without
// `JSONEncoder` (see `StoreCoding.encode`). They read back as their `Codable` form; a test checks it.

extension ClientRegistrationRecord: JSONTextEncodable {
    public var jsonText: [UInt8] {
        var text = JSONText(capacity: 768)
        text.object { record in
            record.member("clientID", clientID)
            record.member("data", data)
            record.member("publicKey", publicKey)
            record.member("createdAt", createdAt)
            record.member("updatedAt", updatedAt)
        }
        return text.bytes
    }
}

extension AuthorizationCodeRecord: JSONTextEncodable {
    public var jsonText: [UInt8] {
        var text = JSONText(capacity: 256)
        text.object { record in
            record.member("codeHash", codeHash)
            record.member("clientID", clientID)
            record.member("scope", scope)
            record.member("redirectURI", redirectURI)
            record.member("expiresAt", expiresAt)
            record.member("tokenExpiresAt", tokenExpiresAt)
            record.member("checks", checks)
            record.member("userID", userID)
        }
        return text.bytes
    }
}

extension AuditEvent: JSONTextEncodable {
    public var jsonText: [UInt8] {
        var text = JSONText(capacity: 256)
        text.object { event in
            event.member("id", id)
            event.member("time", time)
            event.member("event", self.event)
            event.member("clientID", clientID)
            event.member("application", application)
            event.member("user", user)
            event.member("check", check)
            event.member("address", address)
            event.member("node", node)
            event.member("actor", actor)
            event.member("detail", detail)
        }
        return text.bytes
    }
}
