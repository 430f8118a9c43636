import Foundation
@testable import GatehouseClient
import GatehouseProtocol
import Testing

/// The SDK's pieces that need no server.
@Suite(.timeLimit(.minutes(3))) struct SDKUnitTests {
    @Test func bearerChallengesAreParsed() {
        let insufficient = BearerChallenge(#"Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted""#)
        #expect(insufficient == BearerChallenge(#"Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted""#))
        #expect(insufficient?.error == "insufficient_scope")
        #expect(insufficient?.scope == "RegisteredClient accessRestricted")
        #expect(BearerChallenge(#"Bearer error="invalid_token""#)?.error == "invalid_token")
        #expect(BearerChallenge("Bearer")?.error == nil)
        #expect(BearerChallenge(#"bearer realm="x",error=invalid_token"#)?.error == "invalid_token")
        #expect(BearerChallenge(#"Bearer scope="a \"b\"""#)?.scope == #"a "b""#)
        #expect(BearerChallenge("MFP-Challenge") == nil)
        #expect(BearerChallenge(nil) == nil)
        // The word inside another scheme's parameters is not a Bearer challenge.
        #expect(BearerChallenge(#"Basic realm="Bearer API""#) == nil)
        #expect(BearerChallenge(#"Application Basic realm="bearer""#) == nil)
        #expect(BearerChallenge("Bearerish") == nil)
        // A Bearer challenge after another one is.
        #expect(BearerChallenge(#"Basic realm="x", Bearer error="invalid_token""#)?.error == "invalid_token")
    }

    @Test func theResourceScopeCacheKeepsTheHundredMostRecent() {
        let cache = ResourceScopeCache()
        for index in 0..<100 { cache.set("scope\(index)", for: ResourceScopeCache.key(url: "http://x/\(index)", method: "get")) }
        #expect(cache.scope(for: "http://x/0_GET") == "scope0")  // now the most recent
        cache.set("new", for: "http://x/new_GET")
        #expect(cache.count == 100)
        #expect(cache.scope(for: "http://x/1_GET") == nil, "the least recently used entry went")
        #expect(cache.scope(for: "http://x/0_GET") == "scope0")
        #expect(cache.scope(for: "http://x/new_GET") == "new")
    }

    @Test func formsEscapeEverythingButUnreservedCharacters() {
        #expect(FormEncoding.encode([("password", "50% +&=é"), ("a b", "")]) == "password=50%25%20%2B%26%3D%C3%A9&a%20b=")
        #expect(FormEncoding.queryItems(of: "https://mfpredirecturi?code=a%2Bb&x=1") == ["code": "a+b", "x": "1"])
    }

    @Test func accessTokensNormaliseTheirScopeAndExpire() {
        let token = AccessToken(value: "t", scope: "b a", expiresAt: Date().addingTimeInterval(-1))
        #expect(token.scope == "RegisteredClient a b")
        #expect(token.isExpired)
        #expect(token.authorizationHeaderValue == "Bearer t")
        #expect(token.formEncodedBodyParameter == "access_token=t")
    }

    @Test func theFileKeyStoreRoundTrips() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sdk-keystore-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileKeyStore(directory: directory)
        #expect(try await store.load() == nil)
        let registration = StoredRegistration(privateKeyPEM: "PEM", clientID: "id", deviceID: "device")
        try await store.save(registration)
        #expect(try await store.load() == registration)
        try await store.save(StoredRegistration(clientID: "other"))
        #expect(try await store.load()?.clientID == "other")
        try await store.delete()
        #expect(try await store.load() == nil)
    }

    @Test func theDeadlineDeliversTheFirstOutcomeOnly() async {
        let fast = await Deadline.run(within: .seconds(5)) { 42 }
        guard case .value(42) = fast else { Issue.record("expected the value"); return }
        let slow = await Deadline.run(within: .milliseconds(50)) { () async -> Int in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return 0
        }
        guard case .timedOut = slow else { Issue.record("expected a timeout"); return }
        let resolver = Deadline.Resolver<Int>()
        resolver.resolve(.value(7))
        let early = await Deadline.run(within: .seconds(5), resolver: resolver) { 1 }
        guard case .value(7) = early else { Issue.record("expected the early outcome"); return }
    }
}
