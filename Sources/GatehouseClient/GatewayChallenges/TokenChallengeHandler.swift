import Foundation

/// Answers `Application Token` challenges with `Authorization: Token <opaque>` and `Bearer` challenges with
/// `Authorization: Bearer <token>`, with a token from a closure — typically a Gatehouse access token.
public struct TokenChallengeHandler: ChallengeHandler {
    let schemes: Set<String>
    let token: @Sendable (ChallengeRequest) async -> String?

    /// - Parameters:
    ///   - schemes: the schemes answered (after the `Application ` prefix is stripped).
    ///   - token: the token, or `nil` to give up.
    public init(schemes: Set<String> = ["Token", "Bearer"], token: @escaping @Sendable (ChallengeRequest) async -> String?) {
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.token = token
    }

    /// A handler that obtains its token for `scope` through the SDK's authorization manager (running the
    /// security checks' challenges as needed).
    public init(client: GatehouseClient, scope: String?, schemes: Set<String> = ["Token", "Bearer"]) {
        self.init(schemes: schemes) { _ in
            try? await client.obtainAccessToken(forScope: scope).value
        }
    }

    public func canHandle(_ request: ChallengeRequest) -> Bool {
        schemes.contains(request.authenticationScheme.lowercased())
    }

    public func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        guard let token = await token(request), !token.isEmpty else { return nil }
        let scheme = request.authenticationScheme.lowercased() == "bearer" ? "Bearer" : "Token"
        return ChallengeResponse(credentials: "\(scheme) \(token)")
    }
}
