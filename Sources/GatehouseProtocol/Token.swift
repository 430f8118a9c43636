/// The token endpoint's answer (MobileFirst's access token response, runtime REST API `az/v1/token`).
public struct TokenResponse: Codable, Sendable, Equatable {
    public var token_type: String
    /// Seconds.
    public var expires_in: Int
    public var access_token: String
    public var scope: String

    public init(accessToken: String, expiresIn: Int, scope: String) {
        self.token_type = "Bearer"
        self.expires_in = expiresIn
        self.access_token = accessToken
        self.scope = scope
    }
}

extension TokenResponse: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("access_token", access_token)
            answer.member("expires_in", Int64(expires_in))
            answer.member("scope", scope)
            answer.member("token_type", token_type)
        }
    }
}

/// The body of a MobileFirst endpoint's error answer: `{"errorCode":"INVALID_CLIENT_ID","errorMsg":"..."}`.
public struct ErrorResponse: Codable, Sendable, Equatable {
    public var errorCode: String
    public var errorMsg: String

    public init(errorCode: String, errorMsg: String) {
        self.errorCode = errorCode
        self.errorMsg = errorMsg
    }
}

extension ErrorResponse: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("errorCode", errorCode)
            answer.member("errorMsg", errorMsg)
        }
    }
}

/// The body of an OAuth endpoint's error answer (the token, introspection and revocation endpoints; RFC 6749
/// §5.2): `{"error":"invalid_grant","error_description":"..."}`.
public struct OAuthErrorResponse: Codable, Sendable, Equatable {
    public var error: String
    public var errorDescription: String?

    public init(error: String, errorDescription: String?) {
        self.error = error
        self.errorDescription = errorDescription
    }

    enum CodingKeys: String, CodingKey {
        case error, errorDescription = "error_description"
    }
}

extension OAuthErrorResponse: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("error", error)
            answer.member("error_description", errorDescription)
        }
    }
}
