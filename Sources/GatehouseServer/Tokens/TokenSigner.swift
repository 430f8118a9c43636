import Foundation
import GatehouseStore
import GatehouseProtocol
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
/// other at once. Two nodes starting together on an empty store may each store a first key; both then hold both
/// and sign with the newer.
///
/// Rotation: ``rotate()`` (or ``rotate(in:)`` for a store no node has loaded) stores a new key that becomes
/// current; older keys keep verifying the tokens they signed until those expire.
public struct TokenSigner: Sendable {
    private let ring: KeyRing

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
    public static func load(from store: any GatehouseStore, refreshInterval: Duration? = Self.refreshInterval) async throws -> TokenSigner {
        if try await store.signingKeys().isEmpty {
            do {
                try await store.insertSigningKey(Self.newKeyRecord(after: nil))
            } catch {
                // Another node may have stored its key at the same time: use what is there.
            }
        }
        let ring = KeyRing(store: store)
        try await ring.refresh()
        guard !ring.snapshot.records.isEmpty else { throw TokenError.noKey }
        if let refreshInterval { ring.startRefreshing(every: refreshInterval) }
        return TokenSigner(ring: ring)
    }

    /// Stores a new key that becomes the current one of every node sharing `store` (at their next refresh; until
    /// then they verify its tokens by their unknown `kid`). Returns its `kid`.
    @discardableResult
    public static func rotate(in store: any GatehouseStore) async throws -> String {
        let record = newKeyRecord(after: try await store.signingKeys().last)
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

    /// Reads the store's keys now.
    public func refresh() async throws {
        try await ring.refresh()
    }

    /// A new key, created after `newest` even if this node's clock is behind the one that made it.
    static func newKeyRecord(after newest: SigningKeyRecord?) -> SigningKeyRecord {
        let key = ES256PrivateKey()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return SigningKeyRecord(
            kid: UUID().uuidString.lowercased(), algorithm: "ES256", privateKeyPEM: key.pemRepresentation,
            createdAt: max(now, (newest?.createdAt ?? 0) + 1))
    }

    enum TokenError: Error { case noKey }

    /// Signs `claims` with the current key.
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        try await ring.keys.sign(claims, kid: JWKIdentifier(string: currentKID))
    }

    /// Verifies a token's signature, algorithm and expiry, and returns its claims.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        if let kid = Self.kid(of: token), !ring.knows(kid) {
            await ring.refreshForUnknownKID()
        }
        return try await ring.keys.verify(token, as: AccessTokenClaims.self)
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

/// The keys of one node: the JWT key collection (which only grows) and a snapshot for synchronous reads.
private final class KeyRing: Sendable {
    struct Snapshot: Sendable {
        var records: [SigningKeyRecord] = []
        var known: Set<String> = []
        var currentKID = ""
        var jwks: JSON = ["keys": []]
        var published: [String: JSON] = [:]
    }

    private struct Refreshing {
        var inFlight: Task<Void, Never>?
        var lastStarted: ContinuousClock.Instant?
    }

    let store: any GatehouseStore
    let keys = JWTKeyCollection()
    private let state = Mutex(Snapshot())
    private let refreshing = Mutex(Refreshing())
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(store: any GatehouseStore) {
        self.store = store
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    func knows(_ kid: String) -> Bool { state.withLock { $0.known.contains(kid) } }

    /// Reads the store's keys and adds those this node does not know. Merging (never replacing) keeps the key
    /// set growing and the current key the newest, whatever order concurrent refreshes finish in.
    func refresh() async throws {
        let records = try await store.signingKeys()
        let known = state.withLock { $0.known }
        var added: [(SigningKeyRecord, JSON?)] = []
        for record in records where !known.contains(record.kid) && record.algorithm == "ES256" {
            let key = try ES256PrivateKey(pem: record.privateKeyPEM)
            await keys.add(ecdsa: key, kid: JWKIdentifier(string: record.kid))
            var published: JSON?
            if let (x, y) = key.publicKey.parameters {
                published = [
                    "kty": "EC", "crv": "P-256", "x": .string(x), "y": .string(y), "kid": .string(record.kid), "alg": "ES256", "use": "sig",
                ]
            }
            added.append((record, published))
        }
        guard !added.isEmpty else { return }
        state.withLock { state in
            for (record, published) in added where !state.known.contains(record.kid) {
                state.known.insert(record.kid)
                state.records.append(record)
                state.published[record.kid] = published
            }
            state.records.sort { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
            state.currentKID = state.records.last?.kid ?? ""
            state.jwks = ["keys": .array(state.records.compactMap { state.published[$0.kid] })]
        }
    }

    /// Reads the store because a token named an unknown `kid`: joins a read under way, or starts one unless one
    /// started less than ``TokenSigner/unknownKIDSpacing`` ago (so that made-up `kid`s cost at most a read a second).
    func refreshForUnknownKID() async {
        let task: Task<Void, Never>? = refreshing.withLock { refreshing in
            if let inFlight = refreshing.inFlight { return inFlight }
            let now = ContinuousClock.now
            if let last = refreshing.lastStarted, now - last < TokenSigner.unknownKIDSpacing { return nil }
            refreshing.lastStarted = now
            let task = Task { [self] in
                try? await self.refresh()
                self.refreshing.withLock { $0.inFlight = nil }
            }
            refreshing.inFlight = task
            return task
        }
        await task?.value
    }

    /// Re-reads the store every `interval` for as long as the ring is in use.
    func startRefreshing(every interval: Duration) {
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let ring = self else { return }
                try? await ring.refresh()
            }
        }
        timer.withLock { $0 = task }
    }
}
