import Foundation
import GatehouseStore
import JWTKit

/// Signs and verifies access tokens with the server's ES256 keys.
///
/// Keys live in the store: the first start generates one; every node that shares the store signs with the
/// newest key and accepts tokens of any stored key (by `kid`).
public struct TokenSigner: Sendable {
    let keys: JWTKeyCollection
    let currentKID: String

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
        for record in records {
            await keys.add(ecdsa: try ES256PrivateKey(pem: record.privateKeyPEM), kid: JWKIdentifier(string: record.kid))
        }
        return TokenSigner(keys: keys, currentKID: newest.kid)
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
