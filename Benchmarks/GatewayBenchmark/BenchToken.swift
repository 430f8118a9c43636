import BenchmarkSupport
import Foundation
import GatehouseProtocol
import GatehouseResourceServer
import JWTKit

/// An access token as Gatehouse signs them (ES256 under a `kid`, Gatehouse's claims, scope `AUTHORIZED`, valid for
/// a day), and the key set a gateway's `gatehouse-token` module fetches to verify it: the token realm's load.
enum BenchToken {
    static func make() async throws -> (token: String, jwks: String) {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: "bench")
        let now = Int64(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            iss: "http://127.0.0.1", sub: "bench-client", exp: now + 86_400, iat: now, iat_ms: now * 1000, jti: UUID().uuidString,
            scope: "AUTHORIZED", client_id: "bench-client", app: ApplicationData(id: "com.bench", clientPlatform: "web", version: nil),
            checks: ["SimpleCaptcha"], user: nil)
        let token = try await keys.sign(AccessTokenJWT(claims), kid: "bench")
        guard let (x, y) = key.publicKey.parameters else { throw Wrk.Failure(description: "no public key parameters") }
        let jwks = #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","kid":"bench","alg":"ES256","use":"sig"}]}"#
        return (token, jwks)
    }
}
