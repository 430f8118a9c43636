import Foundation
import GatehouseStore
import GatehouseProtocol
import JWTKit

/// Signs and verifies access tokens with the server's ES256 keys.
///
/// Keys live in the store: the first start generates one; every node that shares the store signs with the
/// newest key and accepts tokens of any stored key (by `kid`).
public struct TokenSigner: Sendable {
    let keys: JWTKeyCollection
    let currentKID: String
    /// The public keys as a JWK set: `{"keys":[{"kty":"EC","crv":"P-256","x":..,"y":..,"kid":..,"alg":"ES256","use":"sig"}]}`.
    public let jwks: JSON

    /// Loads the signing keys from `store`, generating and storing the first one if there is none.
    public static func load(from store: any GatehouseStore) async throws -> TokenSigner {
        var records = try await store.signingKeys()
        if records.isEmpty {
            let key = ES256PrivateKey()
            let record = SigningKeyRecord(
                kid: UUID().uuidString.lowercased(), algorithm: "ES256", privateKeyPEM: key.pemRepresentation,
                createdAt: Int64(Date().timeIntervalSince1970 * 1000))
            do {
                try await store.insertSigningKey(record)
            } catch {
                // Another node may have stored its key at the same time: use what is there.
            }
            records = try await store.signingKeys()
        }
        guard let newest = records.last else { throw TokenError.noKey }
        let keys = JWTKeyCollection()
        var published: [JSON] = []
        for record in records {
            let key = try ES256PrivateKey(pem: record.privateKeyPEM)
            await keys.add(ecdsa: key, kid: JWKIdentifier(string: record.kid))
            if let (x, y) = key.publicKey.parameters {
                published.append([
                    "kty": "EC", "crv": "P-256", "x": .string(x), "y": .string(y), "kid": .string(record.kid), "alg": "ES256", "use": "sig",
                ])
            }
        }
        return TokenSigner(keys: keys, currentKID: newest.kid, jwks: ["keys": .array(published)])
    }

    enum TokenError: Error { case noKey }

    /// Signs `claims` with the current key.
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        try await keys.sign(claims, kid: JWKIdentifier(string: currentKID))
    }

    /// Verifies a token's signature, algorithm and expiry, and returns its claims.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        try await keys.verify(token, as: AccessTokenClaims.self)
    }
}
