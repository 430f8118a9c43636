import Crypto
import CryptoExtras
import Foundation
import GatehouseProtocol
public import GatehouseStore

/// id_tokens (OpenID Connect Core §2): signed with the current ES256 key (the access tokens' key) or the current
/// RS256 key, made on first use and kept in the store beside the ES256 keys (every node signs with the newest and
/// publishes all in the JWKS).
extension TokenSigner {
    /// Signs `claims` as a compact JWS with `algorithm`'s current key.
    func signIDToken(_ claims: JSON, algorithm: OpenIDClient.SigningAlgorithm) async throws -> String {
        let payload = Base64URL.encode(JSONBody.buffer(claims).readableBytesView)
        switch algorithm {
        case .es256:
            guard let signer = ring.currentSigner else { throw TokenError.noKey }
            let input = signer.encodedHeader + "." + payload
            return input + "." + Base64URL.encode(try signer.key.signature(for: Data(input.utf8)).rawRepresentation)
        case .rs256:
            let signer = try await currentRSASigner()
            let input = signer.encodedHeader + "." + payload
            let signature = try signer.key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
            return input + "." + Base64URL.encode(signature.rawRepresentation)
        }
    }

    /// Makes sure the store has an RS256 key (the JWKS of a server with RS256 clients publishes it before the first
    /// id_token).
    func ensureRSAKey() async throws {
        _ = try await currentRSASigner()
    }

    /// The current RS256 key; the first one is made and stored now if the store has none (a server without RS256
    /// clients never spends the RSA key generation).
    private func currentRSASigner() async throws -> KeyRing.RSASigner {
        if let signer = ring.currentRSASigner { return signer }
        try await ring.refresh()
        if let signer = ring.currentRSASigner { return signer }
        try await Self.rotateRS256(in: ring.store)
        try await ring.refresh()
        guard let signer = ring.currentRSASigner else { throw TokenError.noKey }
        return signer
    }

    /// Stores a new RS256 key that becomes current for RS256 id_tokens on every node (at its next read of the store);
    /// older RS256 keys keep verifying until retired. Returns its `kid`.
    @discardableResult
    public static func rotateRS256(in store: any SigningKeyStore) async throws -> String {
        let newest = try await store.signingKeys().filter { $0.algorithm == "RS256" }.max { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let record = SigningKeyRecord(kid: UUID().uuidString.lowercased(), algorithm: "RS256", privateKeyPEM: key.pemRepresentation,
                                      createdAt: max(EpochTime.nowMillis(), (newest?.createdAt ?? 0) + 1))
        try await store.insertSigningKey(record)
        return record.kid
    }

    /// The claims of an id_token this server signed (any usable key, either algorithm), its expiry not checked:
    /// for `id_token_hint`, which may name an expired token (OpenID Connect RP-Initiated Logout §2). `nil` when the
    /// signature does not verify or the token is not one of ours.
    func verifiedIDTokenClaims(_ token: String) async -> JSON? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= 16_384, let headerBytes = Base64URL.decode(parts[0]),
              let payloadBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
              let header = try? JSONDecoder().decode(JSON.self, from: Data(headerBytes)),
              let kid = header["kid"]?.stringValue, let algorithm = header["alg"]?.stringValue
        else { return nil }
        if !ring.knows(kid), ring.snapshot.rsaSigners[kid] == nil { await ring.refreshIfStale() }
        let input = Data((parts[0] + "." + parts[1]).utf8)
        let snapshot = ring.snapshot
        let valid: Bool
        switch algorithm {
        case "ES256":
            guard let signer = snapshot.signers[kid], let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return nil }
            valid = signer.key.publicKey.isValidSignature(ecdsa, for: input)
        case "RS256":
            guard let signer = snapshot.rsaSigners[kid] else { return nil }
            valid = signer.key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input,
                                                          padding: .insecurePKCS1v1_5)
        default:
            return nil
        }
        guard valid else { return nil }
        return try? JSONDecoder().decode(JSON.self, from: Data(payloadBytes))
    }
}
