import Foundation
import GatehouseProtocol
import HTTPTypes
public import Hummingbird
import NIOCore

/// A request context that carries the caller's verified token.
public protocol GatehouseRequestContext: RequestContext {
    var token: VerifiedToken? { get set }
}

/// The plain request context with a token slot, which can tell the TLS client certificate of its connection.
public struct TokenRequestContext: GatehouseRequestContext, ClientCertificateRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var token: VerifiedToken?
    private let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    public func presentedCertificate() async -> PresentedCertificate? { await PresentedCertificate.of(channel) }
}

/// Protects the routes after it with a scope, answering exactly as MobileFirst resources do:
/// 401 `Bearer`, 401 `Bearer error="invalid_token"`, 403 `Bearer error="insufficient_scope", scope="..."`.
///
/// ```swift
/// let verifier = LocalTokenVerifier(jwksURL: "http://gatehouse:8080/.well-known/jwks.json")
/// let router = Router(context: TokenRequestContext.self)
/// router.group("accounts").add(middleware: RequireScope(verifier: verifier, scope: "accessRestricted"))
///     .get("balance") { _, context in "19938.80 for \(context.token!.clientID)" }
/// ```
///
/// With `acrValues` or `maxAge` it also asks for a strong or recent enough login (RFC 9470 step-up): a token whose
/// `acr` is none of `acrValues`, or whose user authenticated more than `maxAge` seconds ago, is answered 401
/// `Bearer error="insufficient_user_authentication", acr_values="...", max_age=N, scope="..."` naming `stepUpScope`,
/// the scope whose checks prove enough (`scope` by default); Gatehouse's SDK then obtains a token of it (logging in
/// again when too old) and sends the request once more.
///
/// ```swift
/// // Balances after the login; a transfer after the second factor too (scope "transfers" maps to TOTP).
/// router.group("transfers").add(middleware: RequireScope(verifier: verifier, scope: "balance", acrValues: ["urn:example:mfa"],
///                                                        maxAge: 300, stepUpScope: "balance transfers"))
/// ```
public struct RequireScope<Context: GatehouseRequestContext>: RouterMiddleware {
    let verifier: any TokenVerifier
    let scope: Scope
    let acrValues: [String]
    let maxAge: Int?
    let stepUpScope: Scope

    /// - Parameters:
    ///   - verifier: checks the bearer token (``LocalTokenVerifier`` or ``IntrospectionTokenVerifier``).
    ///   - scope: the required scope elements (`RegisteredClient` is always implied).
    ///   - acrValues: the authentication context classes accepted (any one of them); empty: any token of the scope.
    ///   - maxAge: the most seconds since the user's authentication; `nil`: any.
    ///   - stepUpScope: the scope a step-up answer names: one whose checks prove an accepted `acr` (`scope` when `nil`).
    public init(verifier: any TokenVerifier, scope: String, acrValues: [String] = [], maxAge: Int? = nil, stepUpScope: String? = nil) {
        self.verifier = verifier
        self.scope = Scope(scope)
        self.acrValues = acrValues
        self.maxAge = maxAge
        self.stepUpScope = Scope(stepUpScope ?? scope)
    }


    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do throws(TokenRejection) {
            let token = try await verifier.authorize(authorization: request.headers[.authorization], scope: scope)
            try await PresentedCertificate.check(binding: token.certificateThumbprint, of: context)
            guard token.meets(acrValues: acrValues, maxAge: maxAge) else {
                throw TokenRejection.insufficientUserAuthentication(acrValues: acrValues, maxAge: maxAge, scope: stepUpScope)
            }
            context.token = token
        } catch {
            return Self.response(for: error)
        }
        return try await next(request, context)
    }

    /// The answer for a rejection: its status, `WWW-Authenticate` and a JSON body.
    public static func response(for rejection: TokenRejection) -> Response {
        let code = rejection.code.description
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if let challenge = rejection.challenge { headers[.wwwAuthenticate] = challenge }
        if rejection == .conflict { headers[HTTPField.Name(ProtocolNames.conflictHeader)!] = "true" }
        return Response(status: .init(code: rejection.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: "{\"error\":\"\(code)\"}")))
    }
}
