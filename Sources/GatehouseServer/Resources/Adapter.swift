public import GatehouseProtocol
public import HTTPTypes
public import Hummingbird
public import Logging

/// How a resource is protected, like MobileFirst's `@OAuthSecurity`.
public enum OAuthSecurity: Sendable, Equatable {
    /// A token whose scope holds these elements (and `RegisteredClient`).
    case scope(String)
    /// No token needed, like `@OAuthSecurity(enabled = false)`.
    case disabled

    /// The default when nothing is said: any registered client's token.
    public static let registeredClient = OAuthSecurity.scope(Scope.registeredClient)
}

/// What a resource handler is given beside the request: the validated token (for protected resources).
public struct ResourceContext: Sendable {
    /// The claims of the caller's token; `nil` for unprotected resources.
    public let token: AccessTokenClaims?
    public let logger: Logger
}

/// One endpoint of an adapter.
public struct AdapterRoute: Sendable {
    public typealias Handler = @Sendable (Request, ResourceContext) async throws -> Response

    public let method: HTTPRequest.Method
    /// The path below `/mfp/api/adapters/<adapter>/`.
    public let path: String
    public let security: OAuthSecurity
    public let handler: Handler

    public init(_ method: HTTPRequest.Method, _ path: String, security: OAuthSecurity = .registeredClient, handler: @escaping Handler) {
        self.method = method
        self.path = path
        self.security = security
        self.handler = handler
    }
}

/// A set of resources served at `/mfp/api/adapters/<name>/...`, like a MobileFirst adapter.
///
/// ```swift
/// struct Bank: Adapter {
///     let name = "ResourceAdapter"
///     var routes: [AdapterRoute] {
///         [AdapterRoute(.get, "balance", security: .scope("accessRestricted")) { _, _ in Response(status: .ok) }]
///     }
/// }
/// ```
public protocol Adapter: Sendable {
    var name: String { get }
    var routes: [AdapterRoute] { get }
}
