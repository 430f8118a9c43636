package import GatehouseProtocol

// The records a flow writes (its registration, its authorization code, its audit events) as JSON written without
// `JSONEncoder` (see `StoreCoding.encode`). They read back as their `Codable` form; a test checks it. The code is
// also read back by hand (`StoreCoding.decode`), accepting exactly what its `Decodable` conformance accepts.

extension ClientRegistrationRecord: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { record in
            record.member("clientID", clientID)
            record.member("data", data)
            record.member("publicKey", publicKey)
            record.member("createdAt", createdAt)
            record.member("updatedAt", updatedAt)
        }
    }
}

extension AuthorizationCodeRecord: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { record in
            record.member("codeHash", codeHash)
            record.member("clientID", clientID)
            record.member("scope", scope)
            record.member("redirectURI", redirectURI)
            record.member("expiresAt", expiresAt)
            record.member("tokenExpiresAt", tokenExpiresAt)
            record.member("checks", checks)
            record.member("userID", userID)
            record.member("acr", acr)
            record.member("authTime", authTime)
            if let openID { record.member("openID", json: .object(openID)) }
        }
    }
}

extension AuthorizationCodeRecord: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let codeHash = json.requiredString("codeHash"), let clientID = json.requiredString("clientID"),
              let scope = json.requiredString("scope"), let redirectURI = json.requiredString("redirectURI"),
              case .int(let expiresAt)? = json["expiresAt"], case .int(let tokenExpiresAt)? = json["tokenExpiresAt"],
              case .array(let checkValues)? = json["checks"], let userID = json.optionalString("userID"),
              let acr = json.optionalString("acr"), let authTime = json.optionalInt("authTime")
        else { return nil }
        var checks: [String] = []
        checks.reserveCapacity(checkValues.count)
        for value in checkValues {
            guard case .string(let check) = value else { return nil }
            checks.append(check)
        }
        var openID: JSONObject?
        switch json["openID"] {
        case nil, .null?: openID = nil
        case .object(let object)?: openID = object
        default: return nil
        }
        self.init(codeHash: codeHash, clientID: clientID, scope: scope, redirectURI: redirectURI, expiresAt: expiresAt,
                  tokenExpiresAt: tokenExpiresAt, checks: checks, userID: userID, acr: acr, authTime: authTime, openID: openID)
    }
}

extension AuditEvent: JSONTextEncodable {
    package func write(to text: inout JSONText) {
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
    }
}
