public import GatehouseResourceServer
public import Hummingbird

/// An example service that trusts Gatehouse: `GET /balance` needs a token with `accessRestricted`,
/// `GET /hello` is open.
public enum BalanceService {
    /// The service's router, protected by `verifier` (local JWKS or introspection).
    public static func router(verifier: any TokenVerifier) -> Router<TokenRequestContext> {
        let router = Router(context: TokenRequestContext.self)
        router.get("hello") { _, _ in "hello" }
        router.group("balance")
            .add(middleware: RequireScope(verifier: verifier, scope: "accessRestricted"))
            .get { _, context in "19938.80 for client \(context.token?.clientID ?? "?")" }
        return router
    }
}
