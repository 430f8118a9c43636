public import Foundation
import GatehouseProtocol

/// A request to a protected resource (an adapter, or any resource server that validates the client's
/// tokens), as MobileFirst's `WLResourceRequest`.
///
/// ``send()`` handles the authorization by itself:
/// - it sends the token of the request's ``scope``, or of the scope learnt for this URL and method, up front;
/// - `403` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`: learns the scope (cached per
///   URL and method), obtains a token for it — challenges go to the registered handlers — and sends again;
/// - `401` with `WWW-Authenticate: Bearer`: drops the refused token (`invalid_token`), obtains a new one and sends
///   again;
/// - `409` with `MFP-Conflict`: sends again (at most 7 times);
/// - a response a registered ``LoginPageChallengeHandler`` recognises goes to it, then the request is sent again.
///
/// After 5 authorization retries it fails with ``GatehouseClientError/authorizationFailed(_:underlying:)``.
///
/// ```swift
/// let balance = try await ResourceRequest(client: client, path: "adapters/ResourceAdapter/balance").send().text
/// ```
public struct ResourceRequest: Sendable {
    /// An HTTP method.
    public struct Method: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
        /// The method, upper-case.
        public let rawValue: String
        /// The method named `rawValue` (upper-cased).
        public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
        /// The method named `value` (upper-cased).
        public init(stringLiteral value: String) { self.init(rawValue: value) }
        /// `GET`.
        public static let get = Method(rawValue: "GET")
        /// `POST`.
        public static let post = Method(rawValue: "POST")
        /// `PUT`.
        public static let put = Method(rawValue: "PUT")
        /// `DELETE`.
        public static let delete = Method(rawValue: "DELETE")
        /// `PATCH`.
        public static let patch = Method(rawValue: "PATCH")
        /// `HEAD`.
        public static let head = Method(rawValue: "HEAD")
    }

    /// How many times a request is sent again for authorization.
    public static let maxAuthorizationRetries = 5
    /// How many times a request is sent again after `409 MFP-Conflict`.
    public static let maxConflictRetries = 7

    /// The client whose tokens and handlers the request uses.
    public let client: GatehouseClient
    /// The resource.
    public var url: URL
    /// The method, `GET` by default.
    public var method: Method
    /// Header fields.
    public var headers: [String: String]
    /// Query parameters, added to ``url``'s query.
    public var queryParameters: [(name: String, value: String)]
    /// The body.
    public var body: RequestBody
    /// The timeout of each attempt.
    public var timeout: Duration
    /// The scope to obtain a token for before the first attempt; `nil`: the scope learnt for this URL and
    /// method, if any.
    public var scope: String?

    /// A request to `url`.
    public init(client: GatehouseClient, url: URL, method: Method = .get, headers: [String: String] = [:],
                queryParameters: [(name: String, value: String)] = [], body: RequestBody = .none,
                timeout: Duration = .seconds(30), scope: String? = nil)
    {
        self.client = client
        self.url = url
        self.method = method
        self.headers = headers
        self.queryParameters = queryParameters
        self.body = body
        self.timeout = timeout
        self.scope = scope
    }

    /// A request to `path` under the runtime API (`adapters/ResourceAdapter/balance` is
    /// `<server>/mfp/api/adapters/ResourceAdapter/balance`).
    public init(client: GatehouseClient, path: String, method: Method = .get, headers: [String: String] = [:],
                queryParameters: [(name: String, value: String)] = [], body: RequestBody = .none,
                timeout: Duration = .seconds(30), scope: String? = nil)
    {
        self.init(client: client, url: client.configuration.apiURL(path), method: method, headers: headers,
                  queryParameters: queryParameters, body: body, timeout: timeout, scope: scope)
    }

    /// Sends the request with its ``body``.
    public func send() async throws(GatehouseClientError) -> ResourceResponse {
        try await ResourceRequestSender(request: self).send()
    }

    /// Sends the request with a JSON body.
    public func send(json: JSON) async throws(GatehouseClientError) -> ResourceResponse {
        var request = self
        request.body = .json(json)
        return try await request.send()
    }

    /// Sends the request with form fields.
    public func send(form: [String: String]) async throws(GatehouseClientError) -> ResourceResponse {
        var request = self
        request.body = .form(form.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return try await request.send()
    }

    /// Sends the request with raw bytes.
    public func send(data: Data, contentType: String = "application/octet-stream") async throws(GatehouseClientError) -> ResourceResponse {
        var request = self
        request.body = .data(data, contentType: contentType)
        return try await request.send()
    }

    /// The key of this resource in the scope cache: `"<url>_<METHOD>"`.
    var scopeCacheKey: String { ResourceScopeCache.key(url: url.absoluteString, method: method.rawValue) }
}
