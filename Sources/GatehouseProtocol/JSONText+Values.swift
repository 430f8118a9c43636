/// The values written with ``JSONText`` on hot paths: the token's claims, the protocol's answers, and the registration
/// records the stores keep. Each reads back as its `Codable` form (tests check it, and that answers are the same
/// bytes as `SharedJSONCoders.sortedEncoder` wrote).

extension AccessTokenClaims: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { claims in
            claims.member("iss", iss)
            claims.member("sub", sub)
            claims.member("exp", exp)
            claims.member("iat", iat)
            claims.member("iat_ms", iat_ms)
            claims.member("jti", jti)
            claims.member("scope", scope)
            claims.member("client_id", client_id)
            if let app {
                claims.member("app") { object in
                    object.member("id", app.id)
                    object.member("clientPlatform", app.clientPlatform)
                    object.member("version", app.version)
                }
            }
            claims.member("checks", checks)
            claims.member("user", user)
            claims.member("acr", acr)
            claims.member("auth_time", auth_time)
            if let thumbprint = cnf?.x5tS256 {
                claims.member("cnf") { object in object.member("x5t#S256", thumbprint) }
            }
        }
    }
}

extension TokenResponse: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("access_token", access_token)
            answer.member("expires_in", Int64(expires_in))
            answer.member("scope", scope)
            answer.member("token_type", token_type)
        }
    }
}

extension PreauthorizeResponse: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("challenges", members: challenges)
            answer.member("failures", members: failures)
            answer.member("successes", members: successes)
        }
    }
}

extension TokenIntrospection: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { answer in
            // Sorted by the coded names, as `encode(to:)` writes them through the sorted encoder.
            if active { answer.member("acr", acr) }
            answer.member("active", active)
            guard active else { return }
            answer.member("auth_time", authTime)
            answer.member("client_id", clientID)
            if let cnf { answer.member("cnf", json: cnf) }
            answer.member("exp", exp)
            answer.member("iat", iat)
            answer.member("iss", iss)
            answer.member("jti", jti)
            answer.member("mfp-application", json: application ?? .null)
            answer.member("mfp-checks", members: checks ?? [:])
            answer.member("mfp-device", json: device ?? .null)
            answer.member("mfp-user", json: user ?? .null)
            answer.member("scope", scope)
            answer.member("sub", sub)
            answer.member("token_type", tokenType)
            answer.member("username", username)
        }
    }
}

extension ErrorResponse: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("errorCode", errorCode)
            answer.member("errorMsg", errorMsg)
        }
    }
}

extension OAuthErrorResponse: JSONTextEncodable {
    public func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("error", error)
            answer.member("error_description", errorDescription)
        }
    }
}

extension DeviceData: JSONTextWritable {
    public func write(to text: inout JSONText) {
        text.object { device in
            device.member("id", id)
            device.member("hardware", hardware)
            device.member("platform", platform)
            device.member("deviceDisplayName", deviceDisplayName)
        }
    }
}

extension ApplicationData: JSONTextWritable {
    public func write(to text: inout JSONText) {
        text.object { application in
            application.member("id", id)
            application.member("clientPlatform", clientPlatform)
            application.member("version", version)
        }
    }
}

extension RegistrationData: JSONTextWritable {
    public func write(to text: inout JSONText) {
        text.object { data in
            data.member("device", device)
            data.member("application", application)
            data.member("attributes", members: attributes)
        }
    }
}

extension RSAPublicJWK: JSONTextWritable {
    public func write(to text: inout JSONText) {
        text.object { key in
            key.member("kty", kty)
            key.member("n", n)
            key.member("e", e)
            key.member("kid", kid)
        }
    }
}
