public import AsyncHTTPClient
import Foundation
public import GatehouseProtocol
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The policy the flow benchmarks run: one PIN check on `accessRestricted`, no registration throttle (every flow
/// registers from loopback).
public let benchmarkPolicyYAML = """
    registrationThrottle: { perAddress: 0 }
    confidentialClients:
      - { id: \(benchmarkServiceID), secretHash: "$2b$10$.HFjpHDFzssOxoDyoSvypeJl1RolpDp6b8lk8CVysNwDkxuo3Eyta", allowedScope: "authorization.introspect" }
    securityChecks:
      PinCodeAttempts:
        class: PinCodeAttempts
        properties: { pinCode: "1234", maxAttempts: 3, successStateExpirationSec: 3600 }
    applications:
      - id: com.bench.app
        platform: ios
        scopeElementMapping: { accessRestricted: PinCodeAttempts }
    """

/// The confidential client of the benchmark policy (client credentials, introspection) and its secret.
public let benchmarkServiceID = "bench-service"
public let benchmarkServiceSecret = "bench-secret"

/// The steps of one complete MobileFirst flow, in order.
public enum FlowStep: Int, CaseIterable, Sendable {
    case register, challenge, answer, authorize, token

    public var name: String {
        switch self {
        case .register: "register"
        case .challenge: "preauth 401"
        case .answer: "preauth 200"
        case .authorize: "authorize"
        case .token: "token"
        }
    }
}

/// Why a flow did not complete.
public struct FlowError: Error, CustomStringConvertible {
    public let step: FlowStep
    public let detail: String
    public var description: String { "\(step.name): \(detail)" }

    public init(step: FlowStep, detail: String) {
        self.step = step
        self.detail = detail
    }
}

/// What one completed flow cost.
public struct FlowTiming: Sendable {
    /// Wall time of each step (HTTP exchange, including the client's own signing for that step).
    public var steps = [Duration](repeating: .zero, count: FlowStep.allCases.count)
    /// Time the client spent signing JWS (registration data and the client assertion).
    public var signing: Duration = .zero
    /// The access token the flow ended with.
    public var accessToken = ""
    /// The client the flow registered.
    public var clientID = ""
}

/// A minimal MobileFirst client from the wire protocol: register, answer the PIN challenge, get a token.
///
/// With several nodes' APIs, each request goes to the next node in turn (from ``offset``), as a round-robin load
/// balancer would send them.
public struct FlowClient: Sendable {
    let http: HTTPClient
    /// The runtime API of each node (`http://host:port/mfp/api`).
    let apis: [String]
    /// Which node the first request of a flow goes to.
    public var offset = 0
    let application: ApplicationData
    let redirectURI = "https://mfpredirecturi"
    let requestTimeout: TimeAmount = .seconds(10)

    private struct Reply {
        let status: Int
        let headers: HTTPHeaders
        let body: ByteBuffer
        var text: String { String(buffer: body).prefix(200).description }
    }

    public init(http: HTTPClient, api: String, application: ApplicationData) {
        self.init(http: http, apis: [api], application: application)
    }

    public init(http: HTTPClient, apis: [String], application: ApplicationData) {
        precondition(!apis.isEmpty)
        self.http = http
        self.apis = apis
        self.application = application
    }

    /// Runs one complete flow with `key`; throws a ``FlowError`` at the first unexpected answer.
    public func run(key: ClientKeyPair) async throws -> FlowTiming {
        var timing = FlowTiming()
        let clock = ContinuousClock()

        // 1. POST registration/v1/self with the registration data signed by the client's key.
        var start = clock.now
        let registrationData = RegistrationData(
            device: DeviceData(id: "bench-\(UUID().uuidString)", hardware: "BenchPhone", platform: "ios 18"),
            application: application, attributes: ["sdk_protocol_version": 1])
        let signStart = clock.now
        let jws = try JWS.sign(registrationData, with: key, kid: nil)
        timing.signing += clock.now - signStart
        let registered = try await postJSON("/registration/v1/self", RegistrationRequest(signedRegistrationData: jws), step: .register)
        guard registered.status == 201, let location = registered.headers.first(name: "Location"),
              let clientID = location.split(separator: "/").last.map(String.init), !clientID.isEmpty
        else { throw FlowError(step: .register, detail: "status \(registered.status): \(registered.text)") }
        timing.steps[FlowStep.register.rawValue] = clock.now - start

        // 2. Pre-authorize the scope: the PIN check challenges.
        start = clock.now
        let challenged = try await postJSON(
            "/preauth/v1/preauthorize", PreauthorizeRequest(clientID: clientID, scope: "accessRestricted"), step: .challenge)
        guard challenged.status == 401 else {
            throw FlowError(step: .challenge, detail: "status \(challenged.status) (expected 401): \(challenged.text)")
        }
        timing.steps[FlowStep.challenge.rawValue] = clock.now - start

        // 3. Answer the challenge.
        start = clock.now
        let answered = try await postJSON(
            "/preauth/v1/preauthorize",
            PreauthorizeRequest(clientID: clientID, scope: "accessRestricted", challengeResponse: ["PinCodeAttempts": ["pin": "1234"]]),
            step: .answer)
        guard answered.status == 200 else {
            throw FlowError(step: .answer, detail: "status \(answered.status) (expected 200): \(answered.text)")
        }
        timing.steps[FlowStep.answer.rawValue] = clock.now - start

        // 4. GET az/v1/authorization: 302 to the redirect URI with the code.
        start = clock.now
        let query = Self.formEncode([
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", "accessRestricted"),
        ])
        let authorized = try await send(.GET, "/az/v1/authorization?" + query, step: .authorize)
        guard authorized.status == 302, let redirect = authorized.headers.first(name: "Location"),
              let code = URLComponents(string: redirect)?.queryItems?.first(where: { $0.name == "code" })?.value
        else { throw FlowError(step: .authorize, detail: "status \(authorized.status) (expected 302 with a code): \(authorized.text)") }
        timing.steps[FlowStep.authorize.rawValue] = clock.now - start

        // 5. POST az/v1/token with the code and a client assertion.
        start = clock.now
        let now = EpochTime.nowMillis()
        let claims = ClientAssertionClaims(
            iss: "\(application.id)$\(application.clientPlatform)", sub: clientID, aud: "az/v1/token", iat: now, exp: now + 60_000, jti: code)
        let assertionStart = clock.now
        let assertion = try JWS.sign(claims, with: key, kid: clientID).compact
        timing.signing += clock.now - assertionStart
        let form = Self.formEncode([
            ("grant_type", "authorization_code"), ("code", code), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", assertion),
        ])
        let token = try await send(
            .POST, "/az/v1/token", contentType: "application/x-www-form-urlencoded", body: Data(form.utf8), step: .token)
        guard token.status == 200, let issued = try? JSONDecoder().decode(TokenResponse.self, from: Data(buffer: token.body)) else {
            throw FlowError(step: .token, detail: "status \(token.status) (expected 200 with a token): \(token.text)")
        }
        timing.accessToken = issued.access_token
        timing.clientID = clientID
        timing.steps[FlowStep.token.rawValue] = clock.now - start
        return timing
    }

    private func postJSON(_ path: String, _ value: some Encodable, step: FlowStep) async throws -> Reply {
        try await send(.POST, path, contentType: "application/json; charset=UTF-8", body: try JSONEncoder().encode(value), step: step)
    }

    private func send(_ method: HTTPMethod, _ path: String, contentType: String? = nil, body: Data? = nil, step: FlowStep) async throws -> Reply {
        var request = HTTPClientRequest(url: apis[(offset + step.rawValue) % apis.count] + path)
        request.method = method
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await http.execute(request, timeout: requestTimeout)
            let buffer = try await response.body.collect(upTo: 1024 * 1024)
            return Reply(status: Int(response.status.code), headers: response.headers, body: buffer)
        } catch {
            throw FlowError(step: step, detail: "transport: \(error)")
        }
    }

    static func formEncode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }
}
