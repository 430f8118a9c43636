import GatehouseProtocol

// The runtime requests as their forms and queries carry them (the parameters' names are the protocol's: RFC 6749,
// 7009, 7523 and 7662, and MobileFirst's `security_check`).

extension TokenRequest {
    /// The token request `form` makes, with the request's `Authorization` value.
    ///
    /// - Throws: ``AuthorizationError`` for a form without a grant, with one not issued here, or without its code.
    init(form: [String: String], authorization: String?) throws(AuthorizationError) {
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], !code.isEmpty else { throw .invalidRequest("code is required") }
            self = .authorizationCode(.init(code: code, redirectURI: form["redirect_uri"], clientID: form["client_id"],
                                            assertion: ClientAssertion(form: form)))
        case "client_credentials":
            // A `client_id` without `Authorization` is a client authenticating by its TLS certificate (RFC 8705 §2).
            let authentication: ConfidentialClientAuthentication =
                if authorization == nil, let id = form["client_id"], !id.isEmpty { .certificate(clientID: id) } else { .basic(authorization) }
            self = .clientCredentials(.init(scope: Scope(form["scope"]), authentication: authentication))
        case nil, "":
            throw .invalidRequest("grant_type is required")
        case let other?:
            throw .unsupportedGrantType(other)
        }
    }
}

extension ClientAssertion {
    /// `client_assertion` and `client_assertion_type` of `form`.
    init(form: [String: String]) {
        self.init(jws: form["client_assertion"], type: form["client_assertion_type"])
    }
}

extension TokenManagementRequest {
    /// The introspection or revocation request `form` makes, with the request's `Authorization` value.
    init(form: [String: String], authorization: String?) {
        self.init(token: form["token"] ?? "", authorization: authorization, assertion: ClientAssertion(form: form))
    }
}

extension AuthorizationRequest {
    /// The authorization request of `query`.
    init(query: [String: String]) {
        self.init(responseType: query["response_type"], clientID: query["client_id"], scope: Scope(query["scope"]),
                  redirectURI: query["redirect_uri"])
    }
}
