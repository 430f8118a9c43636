// The protocol's request bodies and JWS parts read by hand (``JSONReader``): each `init?(json:)` accepts exactly
// what the synthesized `Decodable` conformance accepts (required members of the right type, optional ones absent,
// `null` or of the right type, other members ignored) and answers `nil` for anything else.

extension PreauthorizeRequest: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let clientID = json.requiredString("client_id"), let scope = json.optionalString("scope"),
              let answers = json.optionalObject("challengeResponse")
        else { return nil }
        self.init(clientID: clientID, scope: scope, challengeResponse: answers)
    }
}

extension JWS: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let header = json.requiredString("header"), let payload = json.requiredString("payload"),
              let signature = json.requiredString("signature")
        else { return nil }
        self.init(header: header, payload: payload, signature: signature)
    }
}

extension RegistrationRequest: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let data = json["signedRegistrationData"], let signed = JWS(json: data) else { return nil }
        self.init(signedRegistrationData: signed)
    }
}

extension RSAPublicJWK: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let kty = json.requiredString("kty"), let n = json.requiredString("n"), let e = json.requiredString("e"),
              let kid = json.optionalString("kid")
        else { return nil }
        self.init(n: n, e: e, kid: kid)
        self.kty = kty
    }
}

extension JWSHeader: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let alg = json.requiredString("alg"), let jwk = json.optional("jwk", as: RSAPublicJWK.self),
              let typ = json.optionalString("typ")
        else { return nil }
        self.init(alg: alg, jwk: jwk, typ: typ)
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

extension ApplicationData: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let id = json.requiredString("id"), let platform = json.requiredString("clientPlatform"),
              let version = json.optionalString("version")
        else { return nil }
        self.init(id: id, clientPlatform: platform, version: version)
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

extension ClientAssertionClaims: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let iss = json.optionalString("iss"), let sub = json.optionalString("sub"), let aud = json.optionalString("aud"),
              let iat = json.optionalInt("iat"), let exp = json.optionalInt("exp"), let jti = json.optionalString("jti")
        else { return nil }
        self.init(iss: iss, sub: sub, aud: aud, iat: iat, exp: exp, jti: jti)
    }
}
