import Foundation
import GatehouseProtocol

/// A MobileFirst client written straight from the wire protocol, to test the server's answers exactly.
struct ProtocolClient: Sendable {
    private(set) var server: TestServer
    let application: ApplicationData
    let key: ClientKeyPair
    private(set) var clientID: String?
    /// The device id it registers (`device-<application id>` unless given).
    let device: String

    init(_ server: TestServer, app: String = "com.sample.pincodeswift", platform: String = "ios", version: String = "1.0",
         key: ClientKeyPair? = nil, device: String? = nil) throws {
        self.server = server
        self.application = ApplicationData(id: app, clientPlatform: platform, version: version)
        self.key = try key ?? ClientKeyPair()
        self.device = device ?? "device-\(app)"
    }

    var api: String { server.baseURL + "/mfp/api" }

    /// The same registration, talking to another server (a restarted one, another node).
    mutating func move(to server: TestServer) { self.server = server }
    var nativeRedirect: String { "https://mfpredirecturi" }

    func registrationData() -> RegistrationData {
        RegistrationData(
            device: DeviceData(id: device, hardware: "TestPhone", platform: "ios 18"),
            application: application, attributes: ["sdk_protocol_version": 1])
    }

    /// `POST registration/v1/self`.
    func registerRequest(signedWith signer: ClientKeyPair? = nil) async throws -> TestResponse {
        let jws = try JWS.sign(registrationData(), with: signer ?? key, kid: nil)
        return try await HTTP.postJSON(api + "/registration/v1/self", RegistrationRequest(signedRegistrationData: jws))
    }

    /// Registers and keeps the client id from `Location`.
    mutating func register() async throws {
        let response = try await registerRequest()
        guard response.status == 201, let location = response.header("Location") else {
            throw TestFailure("registration answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        clientID = String(location.split(separator: "/").last!)
    }

    /// Takes the client id of a registration answered elsewhere (its `Location`).
    mutating func adopt(clientID: String) { self.clientID = clientID }

    /// `POST preauth/v1/preauthorize`, with a `DPoP` proof when given (``proof(signedWith:method:htu:iat:jti:)``).
    func preauthorize(scope: String?, answers: [String: JSON]? = nil, proof: String? = nil) async throws -> TestResponse {
        let url = api + "/preauth/v1/preauthorize"
        let request = PreauthorizeRequest(clientID: clientID ?? "", scope: scope, challengeResponse: answers)
        guard let proof else { return try await HTTP.postJSON(url, request) }
        return try await HTTP.send(.POST, url, headers: [("Content-Type", "application/json; charset=UTF-8"), (ProofOfPossession.field, proof)],
                                   body: try JSONEncoder().encode(request))
    }

    /// A proof of possession for a pre-authorization round, signed by this client's key unless `signer` is given.
    func proof(signedWith signer: ClientKeyPair? = nil, method: String = "POST", htu: String? = nil,
               iat: Int64 = Int64(Date().timeIntervalSince1970), jti: String = UUID().uuidString) throws -> String {
        try ProofOfPossession.proof(method: method, url: htu ?? api + "/preauth/v1/preauthorize", key: signer ?? key, kid: clientID,
                                    now: iat, jti: jti)
    }

    /// `GET az/v1/authorization`.
    func authorize(scope: String?, redirectURI: String? = nil) async throws -> TestResponse {
        let query = HTTP.formEncode([
            ("response_type", "code"), ("client_id", clientID ?? ""), ("redirect_uri", redirectURI ?? nativeRedirect), ("scope", scope ?? ""),
        ])
        return try await HTTP.send(.GET, api + "/az/v1/authorization?" + query)
    }

    /// A client assertion signed with `signer` (the client's key by default).
    func assertion(jti: String?, aud: String? = "az/v1/token", sub: String? = nil, iat: Int64? = nil, lifetime: Int64 = 60_000,
                   signer: ClientKeyPair? = nil) throws -> String {
        let now = iat ?? Int64(Date().timeIntervalSince1970 * 1000)
        let claims = ClientAssertionClaims(
            iss: "\(application.id)$\(application.clientPlatform)", sub: sub ?? clientID, aud: aud, iat: now, exp: now + lifetime, jti: jti)
        return try JWS.sign(claims, with: signer ?? key, kid: clientID).compact
    }

    /// `POST az/v1/token` with an authorization code.
    func token(code: String, assertion: String? = nil, redirectURI: String? = nil) async throws -> TestResponse {
        try await HTTP.postForm(api + "/az/v1/token", [
            ("grant_type", "authorization_code"), ("code", code), ("client_id", clientID ?? ""),
            ("redirect_uri", redirectURI ?? nativeRedirect),
            ("client_assertion_type", ClientAssertionClaims.assertionType),
            ("client_assertion", try assertion ?? self.assertion(jti: code)),
        ])
    }

    /// The code from an authorization answer's `Location`.
    static func code(from response: TestResponse) -> String? {
        guard let location = response.header("Location"), let components = URLComponents(string: location) else { return nil }
        return components.queryItems?.first { $0.name == "code" }?.value
    }

    /// Authorization then token, for a scope whose checks have succeeded.
    func obtainToken(scope: String?) async throws -> TokenResponse {
        let authorization = try await authorize(scope: scope)
        guard authorization.status == 302, let code = Self.code(from: authorization) else {
            throw TestFailure("authorization answered \(authorization.status): \(String(decoding: authorization.body, as: UTF8.self))")
        }
        let response = try await token(code: code)
        guard response.status == 200 else { throw TestFailure("token answered \(response.status): \(String(decoding: response.body, as: UTF8.self))") }
        return try response.decode(TokenResponse.self)
    }

    /// `POST preauth/v1/logout`.
    func logout(securityCheck: String) async throws -> TestResponse {
        try await HTTP.postForm(api + "/preauth/v1/logout", [
            ("security_check", securityCheck), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ("client_assertion", try assertion(jti: nil, aud: nil)),
        ])
    }

    /// Answers a `SimpleCaptcha` challenge `{"captcha":"X + Y"}`.
    static func captchaAnswer(_ challenge: JSON?) -> JSON {
        let parts = (challenge?["captcha"]?.stringValue ?? "").split(separator: "+").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return ["answer": .string(String(parts.reduce(0, +)))]
    }
}
