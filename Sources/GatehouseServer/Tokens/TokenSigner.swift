import Foundation
public import GatehouseStore
public import GatehouseProtocol
import GatehouseResourceServer
import JWTKit
import Synchronization

/// Signs and verifies access tokens with the server's ES256 keys.
///
/// Keys live in the store: the first start generates one; every node that shares the store signs with the
/// newest key (by creation time, then `kid`) and accepts tokens of any stored key (by `kid`).
///
/// Several nodes: keys are only ever added, never changed, so each node's key set only grows towards the
/// store's. A node re-reads the store every ``refreshInterval`` and, at most once a second, when a token names a
/// `kid` it does not know (a key another node just made current), so a token signed by any node verifies on every
/// other at once. Nodes starting together on an empty store agree on one first key (the store keeps only one).
///
/// Rotation: ``rotate()`` (or ``rotate(in:)`` for a store no node has loaded) stores a new key that becomes
/// current; older keys keep verifying the tokens they signed until those expire.
public struct TokenSigner: Sendable {
    let ring: KeyRing

    /// How often a node re-reads the store's keys.
    public static let refreshInterval: Duration = .seconds(30)
    /// The least time between two reads of the store caused by unknown `kid`s.
    static let unknownKIDSpacing: Duration = .seconds(1)

    var keys: JWTKeyCollection { ring.keys }
    /// The `kid` new tokens are signed with.
    public var currentKID: String { ring.snapshot.currentKID }
    /// Every `kid` this node accepts, oldest first.
    public var kids: [String] { ring.snapshot.records.map(\.kid) }
    /// The public keys as a JWK set: `{"keys":[{"kty":"EC","crv":"P-256","x":..,"y":..,"kid":..,"alg":"ES256","use":"sig"}]}`.
    public var jwks: JSON { ring.snapshot.jwks }

    /// Loads the signing keys from `store`, generating and storing the first one if there is none, and keeps them
    /// in step with the store every `refreshInterval` (`nil`: only on unknown `kid`s and ``refresh()``).
    ///
    /// - Parameter maxKeyAge: keys older than this that are no longer current stop verifying (`nil`: keys are
    ///   retired only by an operator, ``retire(kid:in:)``).
    public static func load(from store: any SigningKeyStore, refreshInterval: Duration? = Self.refreshInterval,
                            maxKeyAge: Duration? = nil) async throws -> TokenSigner {
        if try await store.signingKeys().isEmpty {
            // Nodes starting together on an empty store: one key wins, the others read it below.
            _ = try await store.insertFirstSigningKey(Self.newKeyRecord(after: nil))
        }
        let ring = KeyRing(store: store, maxAge: maxKeyAge)
        try await ring.refresh()
        guard !ring.snapshot.records.isEmpty else { throw TokenError.noKey }
        if let refreshInterval { ring.startRefreshing(every: refreshInterval) }
        return TokenSigner(ring: ring)
    }

    /// Stores a new key that becomes the current one of every node sharing `store` (at their next refresh; until
    /// then they verify its tokens by their unknown `kid`). Returns its `kid`.
    @discardableResult
    public static func rotate(in store: any SigningKeyStore) async throws -> String {
        let record = newKeyRecord(after: try await store.signingKeys().filter { $0.algorithm == "ES256" }.last)
        try await store.insertSigningKey(record)
        return record.kid
    }

    /// Stores a new key, makes it this node's current one at once, and returns its `kid`.
    @discardableResult
    public func rotate() async throws -> String {
        let kid = try await Self.rotate(in: ring.store)
        try await ring.refresh()
        return kid
    }

    /// Whether `kid` was retired (by an operator, or by age).
    public func isRetired(_ kid: String) -> Bool { ring.isRetired(kid) }

    /// Reads the store's keys now.
    public func refresh() async throws {
        try await ring.refresh()
    }

    /// The JWK set, read anew from the store when the last read is older than `staleAfter` (keys rotated or retired
    /// by another node, or by `gatehouse keys`, show at once rather than at the next periodic refresh).
    public func currentJWKS(staleAfter: Duration = .seconds(2)) async -> JSON {
        await ring.refreshIfStale(spacing: staleAfter)
        return ring.snapshot.jwks
    }

    /// Retires `kid` in `store`: no node signs or verifies with it from its next read of the store. The newest key
    /// cannot be retired (rotate first). Throws ``StoreError/notFound`` for an unknown `kid`. Returns `false` when the
    /// key was retired already (nothing changes).
    @discardableResult
    public static func retire(kid: String, in store: any SigningKeyStore) async throws -> Bool {
        let all = try await store.signingKeys()
        guard var record = all.first(where: { $0.kid == kid }) else { throw StoreError.notFound }
        let records = all.filter { $0.algorithm == record.algorithm }   // the newest of its algorithm is current
        guard records.max(by: { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) })?.kid != kid else { throw KeyError.currentKey }
        guard record.retiredAt == nil else { return false }
        record.retiredAt = EpochTime.nowMillis()
        try await store.updateSigningKey(record)
        return true
    }

    /// Why a key operation was refused.
    public enum KeyError: Error, CustomStringConvertible {
        case currentKey
        public var description: String { "the newest key is the current one; rotate first, then retire it" }
    }

    /// A new key, created after `newest` even if this node's clock is behind the one that made it.
    static func newKeyRecord(after newest: SigningKeyRecord?) -> SigningKeyRecord {
        let key = ES256PrivateKey()
        let now = EpochTime.nowMillis()
        return SigningKeyRecord(
            kid: UUID().uuidString.lowercased(), algorithm: "ES256", privateKeyPEM: key.pemRepresentation,
            createdAt: max(now, (newest?.createdAt ?? 0) + 1))
    }

    enum TokenError: Error { case noKey, retiredKey }

    /// Signs `claims` with the current key: a compact JWS (`{"alg":"ES256","kid":..,"typ":"JWT"}`), written here
    /// rather than by jwt-kit — one JSON encoding of the claims and the header made once per key, instead of two
    /// encodings and jwt-kit's generic layers on every token (measured: a fifth of a client_credentials token's CPU).
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        try signed(claims)
    }

    /// ``sign(_:)`` without suspending (the signature is computed on the caller's thread either way), for a token
    /// issued on the event loop (``LoopAnswers``).
    func signed(_ claims: AccessTokenClaims) throws -> String {
        guard let signer = ring.currentSigner else { throw TokenError.noKey }
        let input = signer.encodedHeader + "." + Base64URL.encode(claims.jsonText)
        let signature = try signer.key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }

    /// Verifies a token's signature, algorithm and expiry, and returns its claims.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        if let kid = Self.kid(of: token) {
            if !ring.knows(kid) { await ring.refreshIfStale() }
            if ring.isRetired(kid) { throw TokenError.retiredKey }
        }
        return try await ring.keys.verify(token, as: AccessTokenJWT.self).claims
    }

    /// The `kid` of a compact JWS's header, if it has one.
    static func kid(of token: String) -> String? {
        guard let header = token.split(separator: ".", maxSplits: 1).first, header.count <= 2048,
            let bytes = Base64URL.decode(header),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }
}
