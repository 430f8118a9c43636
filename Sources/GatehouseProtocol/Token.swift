/// The token endpoint's answer (reference §2.3).
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

/// The body of every error answer: `{"errorCode":"INVALID_CLIENT_ID","errorMsg":"..."}`.
public struct ErrorResponse: Codable, Sendable, Equatable {
    public var errorCode: String
    public var errorMsg: String

    public init(errorCode: String, errorMsg: String) {
        self.errorCode = errorCode
        self.errorMsg = errorMsg
    }
}
