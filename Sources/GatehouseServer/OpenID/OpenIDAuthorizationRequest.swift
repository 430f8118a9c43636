import Crypto
import Foundation
import GatehouseProtocol

/// An authentication request (OpenID Connect Core §3.1.2.1), checked: what the hosted sign-in page carries from the
/// authorization endpoint to the code, signed by the server (``OpenIDRequestSeal``) so the browser cannot change it.
struct OpenIDAuthorizationRequest: Codable, Sendable, Equatable {
    var clientID: String
    var redirectURI: String
    /// The scope granted: the values asked for that the client may have, `openid` among them, normalised.
    var scope: String
    var state: String?
    var nonce: String?
    /// PKCE (RFC 7636), S256 only.
    var codeChallenge: String?
    var acrValues: [String]
    /// Seconds.
    var maxAge: Int?
    var prompt: Set<String>
    var loginHint: String?
    var uiLocales: [String]
    /// When the page was shown, epoch ms: a page older than ``lifetime`` is refused.
    var issuedAt: Int64

    /// How long a sign-in page can be used, ms.
    static let lifetime: Int64 = 30 * 60_000

    /// An error about the request, answered where the spec says.
    enum Problem: Error, Equatable {
        /// Said to the user, on the page, never to the redirect URI (an unknown client, a redirect URI not registered).
        case shownToUser(status: Int, message: String)
        /// Returned to the client at its redirect URI (RFC 6749 §4.1.2.1).
        case returnedToClient(error: String, description: String, redirectURI: String, state: String?)
    }

    /// Reads and checks `parameters` (the query, or the form of a POST) against the policy's OpenID clients.
    static func parse(_ parameters: [String: String], clients: [String: OpenIDClient], now: Int64) throws(Problem) -> OpenIDAuthorizationRequest {
        guard let clientID = parameters["client_id"], !clientID.isEmpty else {
            throw .shownToUser(status: 400, message: "The application sent no client_id.")
        }
        guard let client = clients[clientID] else {
            throw .shownToUser(status: 400, message: "The application \"\(clientID.prefix(64))\" is not known here.")
        }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else {
            throw .shownToUser(status: 400, message: "The application sent no redirect_uri.")
        }
        guard client.allowsRedirect(redirectURI) else {
            throw .shownToUser(status: 400, message: "The application asked to return to an address it has not registered.")
        }
        let state = parameters["state"]
        func refuse(_ error: String, _ description: String) -> Problem {
            .returnedToClient(error: error, description: description, redirectURI: redirectURI, state: state)
        }
        if parameters["request"] != nil { throw refuse("request_not_supported", "Request objects are not supported.") }
        if parameters["request_uri"] != nil { throw refuse("request_uri_not_supported", "request_uri is not supported.") }
        if parameters["registration"] != nil { throw refuse("registration_not_supported", "The registration parameter is not supported.") }
        guard let responseType = parameters["response_type"], !responseType.isEmpty else {
            throw refuse("invalid_request", "response_type is required.")
        }
        guard responseType == "code" else { throw refuse("unsupported_response_type", "Only response_type=code is supported.") }
        if let mode = parameters["response_mode"], mode != "query" {
            throw refuse("invalid_request", "Only response_mode=query is supported.")
        }
        let asked = Scope(parameters["scope"])
        guard asked.elements.contains("openid") else { throw refuse("invalid_scope", "The scope must contain openid.") }
        // Values the client may not have are left out of the grant (as unknown ones: Core §3.1.2.1), not refused.
        let granted = asked.customElements.filter { client.allowedScope.contains($0) }.sorted().joined(separator: " ")
        var codeChallenge: String?
        if let challenge = parameters["code_challenge"] {
            guard (parameters["code_challenge_method"] ?? "plain") == "S256" else {
                throw refuse("invalid_request", "code_challenge_method must be S256.")
            }
            guard (43...128).contains(challenge.utf8.count), challenge.utf8.allSatisfy(Self.isUnreserved) else {
                throw refuse("invalid_request", "code_challenge is not a base64url SHA-256.")
            }
            codeChallenge = challenge
        } else if parameters["code_challenge_method"] != nil {
            throw refuse("invalid_request", "code_challenge_method without code_challenge.")
        } else if client.isPublic {
            throw refuse("invalid_request", "A public client must use PKCE (code_challenge with code_challenge_method=S256).")
        }
        let prompt = Set((parameters["prompt"] ?? "").split(separator: " ").map(String.init))
        guard prompt.isSubset(of: ["none", "login", "consent", "select_account"]) else {
            throw refuse("invalid_request", "prompt has an unknown value.")
        }
        if prompt.contains("none"), prompt.count > 1 { throw refuse("invalid_request", "prompt=none cannot be combined with other values.") }
        var maxAge: Int?
        if let text = parameters["max_age"] {
            guard let value = Int(text), value >= 0 else { throw refuse("invalid_request", "max_age must be a number of seconds.") }
            maxAge = value
        }
        for (name, limit) in [("state", 2048), ("nonce", 512), ("login_hint", 256), ("acr_values", 1024), ("ui_locales", 256)] {
            if let value = parameters[name], value.utf8.count > limit { throw refuse("invalid_request", "\(name) is longer than \(limit) bytes.") }
        }
        return OpenIDAuthorizationRequest(
            clientID: clientID, redirectURI: redirectURI, scope: granted, state: state, nonce: parameters["nonce"],
            codeChallenge: codeChallenge, acrValues: (parameters["acr_values"] ?? "").split(separator: " ").map(String.init),
            maxAge: maxAge, prompt: prompt, loginHint: parameters["login_hint"].flatMap { $0.isEmpty ? nil : $0 },
            uiLocales: (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init), issuedAt: now)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// `redirectURI` with `parameters` added to its query (and `iss`, RFC 9207), in this order.
    static func redirect(_ redirectURI: String, _ parameters: [(String, String?)], issuer: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let query = (parameters + [("iss", issuer)]).compactMap { name, value in
            value.map { "\(name)=\($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
        }.joined(separator: "&")
        return redirectURI + (redirectURI.contains("?") ? "&" : "?") + query
    }
}

/// Seals what the browser carries between the server's pages: the authentication request and the CSRF token bound
/// to the browser's session, both HMAC-SHA256 under a key derived from the current token-signing key (every node has
/// it: a page shown by one node is answered by any other).
struct OpenIDRequestSeal: Sendable {
    let key: SymmetricKey

    init(signingKey: P256.Signing.PrivateKey) {
        key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data("gatehouse openid page seal v1".utf8),
                                                                 using: SymmetricKey(data: signingKey.rawRepresentation)))
    }

    /// `base64url(json).base64url(mac)`.
    func seal(_ request: OpenIDAuthorizationRequest) -> String {
        let body = Base64URL.encode(JSONBody.buffer(request).readableBytesView)
        return body + "." + mac(body)
    }

    /// The request `sealed` carries, if its seal is this server's and it is not older than its lifetime.
    func open(_ sealed: String, now: Int64) -> OpenIDAuthorizationRequest? {
        guard sealed.utf8.count <= 16_384 else { return nil }
        let parts = sealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, ConstantTime.sameBytes(mac(String(parts[0])), String(parts[1])),
              let bytes = Base64URL.decode(parts[0]),
              let request = try? JSONDecoder().decode(OpenIDAuthorizationRequest.self, from: Data(bytes)),
              now - request.issuedAt < OpenIDAuthorizationRequest.lifetime, request.issuedAt <= now + 60_000
        else { return nil }
        return request
    }

    /// The CSRF token of a page: bound to the browser's session and to the request (or to `purpose`).
    func csrf(session: String, purpose: String) -> String { mac("csrf\u{0}" + session + "\u{0}" + purpose) }

    /// Whether `token` is the CSRF token of `session` and `purpose` (compared in constant time).
    func isCSRF(_ token: String, session: String, purpose: String) -> Bool {
        ConstantTime.sameBytes(csrf(session: session, purpose: purpose), token)
    }

    private func mac(_ text: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }
}
