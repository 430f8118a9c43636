@testable import GatehouseServer
import Testing

/// The token of an `Authorization` header, read on its bytes for every protected request (RFC 6750 §2.1).
@Suite(.timeLimit(.minutes(1))) struct BearerTokenTests {
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
}
