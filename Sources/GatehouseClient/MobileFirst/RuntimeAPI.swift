import Foundation
import GatehouseProtocol

/// Requests to the authorization server's runtime API (the MobileFirst Server runtime REST API), with the SDK's common headers.
struct RuntimeAPI: Sendable {
    let configuration: ClientConfiguration
    let transport: any HTTPTransport
    let clock: ServerClock
    let observer: ClientObserver

    /// The header fields every request carries.
    var commonHeaders: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            ("X-Requested-With", "XMLHttpRequest"),
            ("x-wl-app-version", configuration.version),
            ("x-wl-platform-version", GatehouseClient.platformVersion),
            ("Accept-Language", Locale.preferredLanguages.first ?? "en"),
            ("User-Agent", "GatehouseClient/\(GatehouseClient.sdkVersion) (\(configuration.platform); \(configuration.applicationID)/\(configuration.version))"),
        ]
        for (name, value) in configuration.globalHeaders.sorted(by: { $0.key < $1.key }) { headers.append((name, value)) }
        return headers
    }

    func send(_ method: String, _ path: String, query: [(String, String)] = [], headers: [(name: String, value: String)] = [], body: Data? = nil)
        async throws(GatehouseClientError) -> TransportResponse
    {
        let url = FormEncoding.url(configuration.apiURL(path), adding: query)
        let request = TransportRequest(method: method, url: url, headers: commonHeaders + headers, body: body, timeout: configuration.requestTimeout)
        var retries = 0
        while true {
            let response = try await transport.send(request)
            guard response.status == 503, retries < Self.busyRetries else { return response }
            // The server refused before doing the work (too many password checks waiting, its store unavailable):
            // asked again after its `Retry-After` (at most 5 s; 1, 2, 3 s without one), a few times.
            retries += 1
            let delay = response.header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { min(max($0, 0), 5) } ?? retries
            do {
                try await Task.sleep(for: .seconds(delay))
            } catch {
                throw .cancelled(underlying: error)
            }
        }
    }

    /// How many times a `503` of the runtime API is asked again before it is the answer.
    static let busyRetries = 3

    func sendJSON(_ method: String, _ path: String, _ value: some Encodable, headers extra: [(name: String, value: String)] = [])
        async throws(GatehouseClientError) -> TransportResponse
    {
        let body: Data
        do {
            body = try JSONEncoder().encode(value)
        } catch {
            throw .invalidArgument("cannot encode the body of \(path): \(error)")
        }
        return try await send(method, path, headers: [("Content-Type", "application/json; charset=UTF-8"), ("Accept", "application/json")] + extra,
                              body: body)
    }

    func postForm(_ path: String, _ fields: [(String, String)]) async throws(GatehouseClientError) -> TransportResponse {
        try await send("POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"), ("Accept", "application/json")],
                       body: Data(FormEncoding.encode(fields).utf8))
    }

    /// A client assertion (as `WLOAuthCertManager` signs it) for `identity`, dated by the server's clock.
    ///
    /// - Parameters:
    ///   - audience: the token endpoint for a token request; `nil` for logout and heartbeat.
    ///   - jti: the authorization code of a token request.
    func assertion(for identity: ClientIdentity, audience: String?, jti: String?) throws(GatehouseClientError) -> String {
        let iat = clock.nowMillis()
        let claims = ClientAssertionClaims(iss: configuration.assertionIssuer, sub: identity.clientID, aud: audience, iat: iat, exp: iat + 60_000, jti: jti)
        do {
            return try JWS.sign(claims, with: identity.key, kid: identity.clientID).compact
        } catch {
            throw .invalidArgument("cannot sign the client assertion: \(error)")
        }
    }

    /// A proof of possession of `identity`'s key (``ProofOfPossession``, RFC 9449's DPoP shape) for `method` on the
    /// runtime API's `path`, dated by the server's clock: the `DPoP` field of every pre-authorization round, which an
    /// application may require (`requireProofOfPossession`) so that nobody who merely knows the client id can
    /// answer its challenges. Servers that do not ask for it ignore it.
    func proof(for identity: ClientIdentity, method: String, path: String) throws(GatehouseClientError) -> (name: String, value: String) {
        do {
            let value = try ProofOfPossession.proof(method: method, url: configuration.apiURL(path).absoluteString, key: identity.key,
                                                    kid: identity.clientID, now: clock.nowMillis() / 1000)
            return (ProofOfPossession.field, value)
        } catch {
            throw .invalidArgument("cannot sign the proof of possession: \(error)")
        }
    }

    /// The token endpoint, the audience of token-request assertions.
    var tokenEndpoint: String { configuration.apiURL("az/v1/token").absoluteString }

    /// The error for an unexpected answer: its status and, for MobileFirst error bodies, `errorCode`/`errorMsg`
    /// (or OAuth's `error`/`error_description`).
    static func error(from response: TransportResponse) -> GatehouseClientError {
        let decoder = JSONDecoder()
        if let body = try? decoder.decode(ErrorResponse.self, from: response.body) {
            return .serverError(status: response.status, errorCode: body.errorCode, message: body.errorMsg)
        }
        if let body = try? decoder.decode(OAuthErrorResponse.self, from: response.body) {
            return .serverError(status: response.status, errorCode: body.error, message: body.errorDescription)
        }
        let text = response.body.isEmpty ? nil : String(decoding: response.body.prefix(300), as: UTF8.self)
        return .serverError(status: response.status, errorCode: nil, message: text)
    }
}

/// A registered client: its id and its key.
struct ClientIdentity: Sendable {
    let clientID: String
    let key: ClientKeyPair
}
