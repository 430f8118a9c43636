import Crypto
import CryptoExtras
import Foundation
import GatehouseProtocol
import GatehouseStore
import JWTKit
import Synchronization

/// The keys of one node: the JWT key collection and a snapshot for synchronous reads, kept in step with the
/// store. Keys are added as they appear; a key an operator retired (``SigningKeyRecord/retiredAt``), or one older
/// than ``maxAge`` that is no longer current, is removed: no token it signed verifies any more and it leaves the
/// JWKS.
final class KeyRing: Sendable {
    /// The current key, ready to sign: the key itself and its JWS header, encoded once.
    struct Signer: Sendable {
        let kid: String
        let key: P256.Signing.PrivateKey
        /// `base64url({"alg":"ES256","kid":..,"typ":"JWT"})`.
        let encodedHeader: String

        init(kid: String, pem: String) throws {
            self.kid = kid
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
            encodedHeader = KeyRing.encodedHeader(algorithm: "ES256", kid: kid)
        }
    }

    /// An RS256 key for id_tokens (OpenID Connect requires RS256 of every provider), with its JWS header.
    struct RSASigner: Sendable {
        let kid: String
        let key: _RSA.Signing.PrivateKey
        /// `base64url({"alg":"RS256","kid":..,"typ":"JWT"})`.
        let encodedHeader: String
        /// The public key as a JWK.
        let published: JSON

        init(kid: String, pem: String) throws {
            self.kid = kid
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            encodedHeader = KeyRing.encodedHeader(algorithm: "RS256", kid: kid)
            let primitives = try key.publicKey.getKeyPrimitives()
            published = [
                "kty": "RSA", "n": .string(Base64URL.encode(primitives.modulus)), "e": .string(Base64URL.encode(primitives.publicExponent)),
                "kid": .string(kid), "alg": "RS256", "use": "sig",
            ]
        }
    }

    /// `base64url({"alg":..,"kid":..,"typ":"JWT"})`: a key's JWS header, encoded once.
    static func encodedHeader(algorithm: String, kid: String) -> String {
        let header: JSON = ["alg": .string(algorithm), "kid": .string(kid), "typ": "JWT"]
        return Base64URL.encode(JSONBody.buffer(header).readableBytesView)
    }

    struct Snapshot: Sendable {
        /// The RS256 keys (id_tokens), oldest first, and the current one's `kid`.
        var rsaRecords: [SigningKeyRecord] = []
        var rsaSigners: [String: RSASigner] = [:]
        var currentRSAKID: String?
        var records: [SigningKeyRecord] = []
        var known: Set<String> = []
        /// Keys that once verified here and no longer do.
        var retired: Set<String> = []
        var currentKID = ""
        var signers: [String: Signer] = [:]
        var jwks: JSON = ["keys": []]
        var published: [String: JSON] = [:]
        var lastRefresh: ContinuousClock.Instant?
    }

    private struct Refreshing {
        var inFlight: Task<Void, Never>?
        var lastStarted: ContinuousClock.Instant?
    }

    let store: any SigningKeyStore
    /// Keys not current and older than this are retired by age (`nil`: only by an operator).
    let maxAge: Duration?
    let keys = JWTKeyCollection()
    private let state = Mutex(Snapshot())
    private let refreshing = Mutex(Refreshing())
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(store: any SigningKeyStore, maxAge: Duration?) {
        self.store = store
        self.maxAge = maxAge
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// The key new tokens are signed with (without copying the whole snapshot).
    var currentSigner: Signer? { state.withLock { $0.signers[$0.currentKID] } }

    /// The RS256 key new id_tokens are signed with, if the store has one.
    var currentRSASigner: RSASigner? { state.withLock { state in state.currentRSAKID.flatMap { state.rsaSigners[$0] } } }

    /// Whether `kid` is a key this node has seen (usable or retired): unknown ones make it read the store.
    func knows(_ kid: String) -> Bool { state.withLock { $0.known.contains(kid) || $0.retired.contains(kid) } }

    /// Whether `kid` was retired.
    func isRetired(_ kid: String) -> Bool { state.withLock { !$0.retired.isEmpty && $0.retired.contains(kid) } }

    /// Reads the store's keys: adds those this node does not know, removes those retired meanwhile. The current
    /// key is the newest usable one, whatever order concurrent refreshes finish in.
    func refresh() async throws {
        let stored = try await store.signingKeys()
        let records = stored.filter { $0.algorithm == "ES256" }
        let now = EpochTime.nowMillis()
        let newestKID = records.max { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }?.kid
        let maxAgeMillis = maxAge.map { Int64($0.components.seconds) * 1000 }
        func isRetired(_ record: SigningKeyRecord) -> Bool {
            if let retiredAt = record.retiredAt, retiredAt <= now { return true }
            if let maxAgeMillis, record.kid != newestKID, now - record.createdAt > maxAgeMillis { return true }
            return false
        }
        let (known, retired) = state.withLock { ($0.known, $0.retired) }
        var added: [(SigningKeyRecord, JSON?, Signer)] = []
        var newlyRetired: [String] = []
        for record in records {
            if isRetired(record) {
                if !retired.contains(record.kid) { newlyRetired.append(record.kid) }
                continue
            }
            guard !known.contains(record.kid) else { continue }
            let key = try ES256PrivateKey(pem: record.privateKeyPEM)
            await keys.add(ecdsa: key, kid: JWKIdentifier(string: record.kid))
            var published: JSON?
            if let (x, y) = key.publicKey.parameters {
                published = [
                    "kty": "EC", "crv": "P-256", "x": .string(x), "y": .string(y), "kid": .string(record.kid), "alg": "ES256", "use": "sig",
                ]
            }
            added.append((record, published, try Signer(kid: record.kid, pem: record.privateKeyPEM)))
        }
        for kid in newlyRetired { _ = await keys.remove(kid: JWKIdentifier(string: kid)) }
        // RS256 keys (id_tokens only): the newest is current; retired ones leave at once, none by age but the current.
        let rsaRecords = stored.filter { $0.algorithm == "RS256" }
        let newestRSAKID = rsaRecords.max { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }?.kid
        let usableRSA = rsaRecords.filter { record in
            if let retiredAt = record.retiredAt, retiredAt <= now { return false }
            if let maxAgeMillis, record.kid != newestRSAKID, now - record.createdAt > maxAgeMillis { return false }
            return true
        }.sorted { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
        let knownRSA = state.withLock { $0.rsaSigners }
        var rsaSigners: [String: RSASigner] = [:]
        for record in usableRSA { rsaSigners[record.kid] = try knownRSA[record.kid] ?? RSASigner(kid: record.kid, pem: record.privateKeyPEM) }
        state.withLock { state in
            for (record, published, signer) in added where !state.known.contains(record.kid) && !state.retired.contains(record.kid) {
                state.known.insert(record.kid)
                state.records.append(record)
                state.published[record.kid] = published
                state.signers[record.kid] = signer
            }
            for kid in newlyRetired {
                state.retired.insert(kid)
                state.known.remove(kid)
                state.records.removeAll { $0.kid == kid }
                state.published[kid] = nil
                state.signers[kid] = nil
            }
            state.records.sort { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
            state.currentKID = state.records.last?.kid ?? ""
            state.rsaRecords = usableRSA
            state.rsaSigners = rsaSigners
            state.currentRSAKID = usableRSA.last?.kid
            state.jwks = ["keys": .array(state.records.compactMap { state.published[$0.kid] } + usableRSA.compactMap { rsaSigners[$0.kid]?.published })]
            state.lastRefresh = .now
        }
    }

    /// Reads the store because a token named an unknown `kid`, or the JWKS was asked for and the last read is
    /// older than `spacing`: joins a read under way, or starts one unless one started less than `spacing` ago (so
    /// that made-up `kid`s cost at most a read a second).
    func refreshIfStale(spacing: Duration = TokenSigner.unknownKIDSpacing) async {
        let task: Task<Void, Never>? = refreshing.withLock { refreshing in
            if let inFlight = refreshing.inFlight { return inFlight }
            let now = ContinuousClock.now
            if let last = refreshing.lastStarted, now - last < spacing { return nil }
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
