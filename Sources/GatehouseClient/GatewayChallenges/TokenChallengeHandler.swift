import Foundation

/// Answers `Application Token` challenges with `Authorization: Token <opaque>` and `Bearer` challenges with
/// `Authorization: Bearer <token>`, with a token from a closure — typically a Gatehouse access token.
///
/// When no token can be had, the request fails with `cancelled` and, for a handler
/// made with ``init(client:scope:schemes:)`` or ``init(schemes:obtain:)``, the reason as its
/// ``GatewayClientError/underlying`` cause (the ``GatehouseClientError`` of the token flow: a cancelled PIN
/// prompt, a failed check, a network error).
public struct TokenChallengeHandler: HTTPChallengeHandler {
    let schemes: Set<String>
    let token: @Sendable (ChallengeRequest) async throws -> String?

    /// - Parameters:
    ///   - schemes: the schemes answered (after the `Application ` prefix is stripped).
    ///   - token: the token, or `nil` to give up.
    public init(schemes: Set<String> = ["Token", "Bearer"], token: @escaping @Sendable (ChallengeRequest) async -> String?) {
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.token = token
    }

    /// - Parameters:
    ///   - schemes: the schemes answered (after the `Application ` prefix is stripped).
    ///   - obtain: the token; what it throws is the reason the request fails (kept as its cause).
    public init(schemes: Set<String> = ["Token", "Bearer"], obtain: @escaping @Sendable (ChallengeRequest) async throws -> String) {
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.token = { try await obtain($0) }
    }

    /// A handler that obtains its token for `scope` through the SDK's authorization manager (running the
    /// security checks' challenges as needed); why a token could not be obtained is kept as the cause.
    public init(client: GatehouseClient, scope: String?, schemes: Set<String> = ["Token", "Bearer"]) {
        self.init(schemes: schemes, obtain: { _ in try await client.obtainAccessToken(forScope: scope).value })
    }

    /// Whether the challenge's scheme is one of this handler's.
    public func canHandle(_ request: ChallengeRequest) -> Bool {
        schemes.contains(request.authenticationScheme.lowercased())
    }

    /// The answer, or `nil` when no token can be had (the reason is lost: the gateway clients call
    /// ``respond(to:)``, which keeps it).
    public func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        try? await respond(to: request)
    }

    /// The answer; throws the reason when no token can be had.
    public func respond(to request: ChallengeRequest) async throws -> ChallengeResponse? {
        guard let token = try await token(request), !token.isEmpty else { return nil }
        let scheme = request.authenticationScheme.lowercased() == "bearer" ? "Bearer" : "Token"
        return ChallengeResponse(credentials: "\(scheme) \(token)")
    }
}
