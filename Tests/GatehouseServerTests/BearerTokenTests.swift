@testable import GatehouseServer
import Testing

/// The token of an `Authorization` header, read on its bytes for every protected request (RFC 6750 §2.1).
@Suite(.timeLimit(.minutes(3))) struct BearerTokenTests {
    @Test func theSchemeIsCaseInsensitiveAndBlanksAroundTheTokenAreAllowed() {
        for header in ["Bearer abc.def-ghi_j~", "bearer abc.def-ghi_j~", "BEARER\tabc.def-ghi_j~", "Bearer   abc.def-ghi_j~ \t", "bEaReR abc.def-ghi_j~"] {
            #expect(TokenValidator.bearerToken(header) == "abc.def-ghi_j~", "\(header)")
        }
        #expect(TokenValidator.bearerToken("Bearer é🔐") == "é🔐", "bytes beyond ASCII stay whole (the signature check refuses them)")
    }

    @Test func anythingElseHasNoToken() {
        for header in [nil, "", "Bearer", "Bearer ", "Bearer \t ", "Bearerabc", "Basic abc", "Bearer a b", "Bearer a\tb", " Bearer abc", "Bearex abc",
                       "Bear abc", "Bearer\u{0}abc"] {
            #expect(TokenValidator.bearerToken(header) == nil, "\(String(describing: header))")
        }
    }

    /// The verified-token cache's key hashes a token's length and last 32 bytes (its signature's end) and compares
    /// it whole: equal texts hash alike however they were made, texts that differ only before their last 32 bytes
    /// collide but never match, and a change in the last bytes or the length changes the hash.
    @Test func theCacheKeyHashesTheTokensEndAndComparesItWhole() {
        let token = "eyJhbGciOiJFUzI1NiJ9." + String(repeating: "p", count: 300) + ".sig-" + String(repeating: "é", count: 20) + "0123456789abcdef"
        let rebuilt = String(("Bearer " + token).dropFirst(7))
        #expect(TokenValidator.CacheKey(text: token) == TokenValidator.CacheKey(text: rebuilt))
        #expect(TokenValidator.CacheKey(text: token).hashValue == TokenValidator.CacheKey(text: rebuilt).hashValue)
        let earlyChange = "X" + token.dropFirst()
        #expect(TokenValidator.CacheKey(text: earlyChange).hashValue == TokenValidator.CacheKey(text: token).hashValue)
        #expect(TokenValidator.CacheKey(text: earlyChange) != TokenValidator.CacheKey(text: token))
        #expect(TokenValidator.CacheKey(text: token.dropLast() + "g").hashValue != TokenValidator.CacheKey(text: token).hashValue)
        #expect(TokenValidator.CacheKey(text: token + "a").hashValue != TokenValidator.CacheKey(text: token).hashValue)
        // Compared byte for byte: a canonically equivalent spelling (KELVIN SIGN for K) is another key.
        #expect(TokenValidator.CacheKey(text: "a.b.K") != TokenValidator.CacheKey(text: "a.b.\u{212A}"))
        let cache: Set = [TokenValidator.CacheKey(text: token)]
        #expect(cache.contains(TokenValidator.CacheKey(text: rebuilt)) && !cache.contains(TokenValidator.CacheKey(text: earlyChange)))
    }
}
