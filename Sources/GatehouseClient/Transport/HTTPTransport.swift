public import Foundation

/// One HTTP request as the SDK sends it.
public struct TransportRequest: Sendable {
    /// `GET`, `POST`, ...
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    /// Header fields, in order.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Data?
    /// How long the request may take.
    public var timeout: Duration

    /// A request; see the properties.
    public init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil, timeout: Duration = .seconds(30)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP response, redirects not followed.
public struct TransportResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields by lower-cased name (values of repeated fields joined by `", "`).
    public var headers: [String: String]
    /// The body (empty when there is none).
    public var body: Data

    /// A response; header names are lower-cased here.
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
        self.body = body
    }

    /// The value of a header field, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// How the SDK talks HTTP. ``URLSessionTransport`` is the default; tests and apps can supply their own (to
/// observe traffic, or to go through another HTTP stack).
///
/// A transport must **not** follow redirects: the authorization endpoint answers with a redirect whose
/// `Location` carries the authorization code.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse
}
