import Foundation
import GatehouseProtocol
import Testing

/// The hand reader of the flow's bodies never reads a text differently from `JSONDecoder`: whatever it reads, Foundation
/// reads the same way; whatever it leaves, Foundation decides. Checked on chosen texts and on thousands of mutations.
@Suite(.timeLimit(.minutes(3))) struct JSONReaderTests {
    static let preauthorize = [
        #"{"client_id":"c-1","scope":"accessRestricted"}"#,
        #"{"client_id":"c-1","scope":"RegisteredClient PinCodeAttempts","challengeResponse":{"PinCodeAttempts":{"pin":"1234"}}}"#,
        #" { "scope" : null , "client_id" : "c\u00e9\/\"\\\n\ud83d\ude00" , "extra" : [1, -2, true, false, null, {"a": []}] } "#,
        #"{"client_id":"c","challengeResponse":{"SimpleCaptcha":{"answer":17},"UserLogin":{"username":"john","password":"é","rememberMe":true}}}"#,
        #"{"client_id":"c","challengeResponse":null}"#, #"{"client_id":"c","scope":""}"#,
    ]

    /// Texts the reader must leave to `JSONDecoder` (or read the same), valid or not.
    static let awkward = [
        #"{"client_id":1}"#, #"{"client_id":null}"#, #"{"scope":"x"}"#, #"{"client_id":"a","client_id":"b"}"#, "\u{FEFF}{\"client_id\":\"c\"}",
        #"{"client_id":"c","challengeResponse":{"x":1.0}}"#, #"{"client_id":"c","challengeResponse":{"x":1e2}}"#, #"{"client_id":"c","x":01}"#,
        #"{"client_id":"c","challengeResponse":{"x":12345678901234567890}}"#, #"{"client_id":"\ud83d"}"#, #"{"client_id":"\udc00"}"#,
        "{\"client_id\":\"a\u{1}\"}", #"{"client_id":"c",}"#, #"{"client_id":"c"} x"#, #"[{"client_id":"c"}]"#, #"{"client_id":"c","scope":5}"#,
        #"{"client_id":"c","challengeResponse":[]}"#, #"{"client_id":"c","challengeResponse":{"x":-0}}"#, #"{"client_id":"\u0000"}"#,
        #"{"client_id":"c","x":tru}"#, #"{"client_id":"c","x":"\x"}"#, #"{"client_id":"c","x":"\u12"}"#, "", " ", "{", #"{"client_id""#,
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40), #"{"client_id":"c","x":-}"#, #"{"client_id":"c","x":1.}"#,
    ]

    /// The value as the sorted encoder writes it, to compare types that are not `Equatable`.
    static func text(_ value: some Encodable) -> String {
        String(decoding: (try? SharedJSONCoders.sortedEncoder.encode(value)) ?? Data(), as: UTF8.self)
    }

    /// Whether `SharedJSONCoders.decode` (hand reader first) and `JSONDecoder` agree on `text` for `type`.
    static func agree<T: Codable>(_ type: T.Type, _ bytes: [UInt8]) -> Bool {
        let fast = try? SharedJSONCoders.decode(type, from: bytes)
        let foundation = try? JSONDecoder().decode(type, from: Data(bytes))
        switch (fast, foundation) {
        case (nil, nil): return true
        case let (fast?, foundation?): return text(fast) == text(foundation)
        default: return false
        }
    }

    @Test func theFlowsBodiesAreReadByHandAndAsJSONDecoderReadsThem() throws {
        for body in Self.preauthorize {
            let json = try #require(JSONReader.read(Array(body.utf8)), "\(body)")
            #expect(PreauthorizeRequest(json: json) != nil, "the hand path reads \(body)")
            #expect(json == (try JSONDecoder().decode(JSON.self, from: Data(body.utf8))))
            #expect(Self.agree(PreauthorizeRequest.self, Array(body.utf8)))
        }
        let header = #"{"alg":"RS256","jwk":{"kty":"RSA","n":"AQAB","e":"AQAB","kid":null}}"#
        #expect(JSONReader.read(Array(header.utf8)).flatMap(JWSHeader.init(json:)) != nil)
        let registration = #"{"device":{"id":"d","hardware":"h","platform":null},"application":{"id":"a","clientPlatform":"ios","version":"1"},"attributes":{"k":[1]}}"#
        #expect(JSONReader.read(Array(registration.utf8)).flatMap(RegistrationData.init(json:)) != nil)
        let claims = #"{"iss":"a$ios$1","sub":"c","aud":"https://h/mfp/api/az/v1/token","iat":1795581718000,"exp":1795581778000,"jti":"code"}"#
        #expect(JSONReader.read(Array(claims.utf8)).flatMap(ClientAssertionClaims.init(json:)) != nil)
        for (type, text) in [(0, header), (1, registration), (2, claims), (3, #"{"signedRegistrationData":{"header":"h","payload":"p","signature":"s"}}"#)] {
            let bytes = Array(text.utf8)
            let agrees = switch type {
            case 0: Self.agree(JWSHeader.self, bytes)
            case 1: Self.agree(RegistrationData.self, bytes)
            case 2: Self.agree(ClientAssertionClaims.self, bytes)
            default: Self.agree(RegistrationRequest.self, bytes)
            }
            #expect(agrees, "\(text)")
        }
    }

    @Test func awkwardTextsAreReadAsJSONDecoderReadsThem() {
        for text in Self.awkward {
            let bytes = Array(text.utf8)
            if let mine = JSONReader.read(bytes) {
                #expect(mine == (try? JSONDecoder().decode(JSON.self, from: Data(bytes))), "\(text)")
            }
            #expect(Self.agree(PreauthorizeRequest.self, bytes), "\(text)")
        }
        #expect(JSONReader.read(Array(#"{"a":1,"a":2}"#.utf8)) == nil, "duplicate keys are left to JSONDecoder (which keeps the first)")
        #expect(JSONReader.read(Array((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8)) == nil)
    }

    /// Mutations of the flow's bodies (a byte changed, inserted or removed; 4,000 of them, from a fixed seed): the
    /// two readers agree on every one, as JSON and as each request type.
    @Test func mutatedBodiesAreReadAsJSONDecoderReadsThem() {
        var random = SplitMix64(seed: 0x6A7E_40C5)
        let alphabet = Array(#"{}[]":,\ 0123456789.-+eEtrufalsn"u\/bdc"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF, 0xED, 0xA0, 0x80]
        let seeds = (Self.preauthorize + [#"{"iss":"a","sub":"c","iat":1,"exp":2,"jti":"x","aud":null}"#]).map { Array($0.utf8) }
        var read = 0
        for round in 0..<4000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...(Int(random.next() % 3)) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                default: if position < bytes.count { bytes.remove(at: position) }
                }
            }
            if let mine = JSONReader.read(bytes) {
                read += 1
                let foundation = try? JSONDecoder().decode(JSON.self, from: Data(bytes))
                #expect(mine == foundation, "\(String(decoding: bytes, as: UTF8.self))")
            }
            #expect(Self.agree(PreauthorizeRequest.self, bytes), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(Self.agree(ClientAssertionClaims.self, bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(read > 400, "many mutations stay valid JSON and are read by hand (\(read))")
    }
}
