import Foundation
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// JSON written by hand (the token's claims, the token answer) reads back as the `Codable` form, whatever the
/// strings hold; the hot path's content-type check reads media types as the RFC says.
@Suite(.timeLimit(.minutes(3))) struct JSONTextTests {
    static let awkward = ["plain", "quote \" backslash \\ slash /", "new\nline\ttab\rreturn", "\u{0}\u{1}\u{1F}\u{7F}",
                          "é 日本 🔐", "", "{\"json\":[1,2]}"]

    @Test(.timeLimit(.minutes(1)), arguments: awkward) func claimsReadBackAsTheyWere(text: String) throws {
        let claims = AccessTokenClaims(
            iss: "https://auth.example/\(text)", sub: text, exp: 1_795_581_718, iat: -1, iat_ms: Int64.max, jti: text, scope: "a \(text)",
            client_id: text, app: ApplicationData(id: text, clientPlatform: "ios", version: text.isEmpty ? nil : text),
            checks: [text, "PinCodeAttempts"], user: text.isEmpty ? nil : text)
        let written = claims.jsonText
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(written)) == claims)
        #expect(try JSONSerialization.jsonObject(with: Data(written)) is [String: Any], "strict JSON")
        let bare = AccessTokenClaims(iss: "i", sub: "s", exp: 1, iat: 1, iat_ms: 1, jti: "j", scope: "", client_id: "c", app: nil, checks: [], user: nil)
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(bare.jsonText)) == bare)
        #expect(!String(decoding: bare.jsonText, as: UTF8.self).contains("null"), "absent optionals are left out, as Codable does")
    }

    @Test(.timeLimit(.minutes(1)), arguments: awkward) func tokenAnswersReadBackAsTheyWere(text: String) throws {
        let answer = TokenResponse(accessToken: "eyJ.\(text).sig", expiresIn: 3599, scope: text)
        #expect(try JSONDecoder().decode(TokenResponse.self, from: Data(JSONBody.buffer(answer).readableBytesView)) == answer)
    }

    @Test(.timeLimit(.minutes(1))) func mediaTypesAreReadCaseInsensitivelyWithoutParameters() {
        let form = "application/x-www-form-urlencoded"
        for good in [form, "Application/X-WWW-Form-URLEncoded", "  \(form)  ", "\(form); charset=UTF-8", "\(form)\t;x=y"] {
            #expect(RequestReading.mediaType(of: good, is: form), "\(good)")
        }
        for bad in ["", ";", "application/json", "\(form)x", "x\(form)", "application/x-www-form-urlencode", "\(form) x"] {
            #expect(!RequestReading.mediaType(of: bad, is: form), "\(bad)")
        }
    }
}
