import Foundation
@testable import GatehouseGateway
import HTTPTypes
import Testing

/// A login module whose subject's name carries a line break (a misconfigured directory, a hostile token issuer).
struct LineBreakNameModule: LoginModule {
    func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        .success(Subject(name: "eve\r\nX-Injected: yes", roles: ["AUTHORIZED"]))
    }
}

/// How the gateway reads `Basic` credentials (by hand, over bytes, on every request of a `Basic` realm) and what it
/// refuses to send upstream.
@Suite(.timeLimit(.minutes(3))) struct GatewayCredentialsTests {
    /// What Foundation's decoder reads from a `Basic` value that is base64 as RFC 4648 §4 writes it (its alphabet, a
    /// length in whole groups of four, at most two `=` and only at the end); `nil` for anything else. Foundation
    /// itself reads some texts that are not (`Og===`, `OmE6Yg=k`): the gateway refuses those.
    static func strictBasic(_ value: String) -> (username: String, password: String)? {
        let bytes = Array(value.utf8)
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard bytes.count % 4 == 0, padding <= 2, bytes.dropLast(padding).allSatisfy({ byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
        }) else { return nil }
        // Split at the first colon byte (RFC 7617), not the first `Character` ":": a colon followed by a combining
        // mark is one `Character`, but the user name still ends there.
        guard let data = Data(base64Encoded: value), String(data: data, encoding: .utf8) != nil,
              let colon = data.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (String(decoding: data[..<colon], as: UTF8.self), String(decoding: data[(colon + 1)...], as: UTF8.self))
    }

    @Test func basicCredentialsAreStrictBase64ReadAsFoundationReadsIt() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["joe", "welcome", ":", "é", "日本", "\u{0}", "a:b", "", " ", "+", "/", "=="]
        var texts: [String] = ["", "=", "====", "am9lOndlbGNvbWU=", "am9lOndlbGNvbWU", "am9lOndlbGNvbWU==", "am9l Ondl", "YQ==", "YWI=",
                               "Y===", "-_-_", "am9lOndlbGNvbWU=\t", "\u{FEFF}YQ==", "Os2p"]   // ":" + U+0369, a combining mark
        for _ in 0..<2000 {
            let plain: [UInt8]
            if Bool.random(using: &random) {
                plain = Array((0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined().utf8)
            } else {
                plain = (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            var text = Data(plain).base64EncodedString()
            switch Int.random(in: 0..<6, using: &random) {
            case 0: while text.hasSuffix("=") { text.removeLast() }                     // padding left out
            case 1: text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            case 2 where !text.isEmpty:                                                // one byte changed
                var bytes = Array(text.utf8)
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0x20...0x7E, using: &random)
                text = String(decoding: bytes, as: UTF8.self)
            case 3: text.insert("=", at: text.index(text.startIndex, offsetBy: Int.random(in: 0...text.count, using: &random)))
            default: break
            }
            texts.append(text)
        }
        for text in texts {
            let hand = Credentials(scheme: "Basic", value: text).basic
            let reference = Self.strictBasic(String(text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))))
            #expect(hand?.username == reference?.username && hand?.password == reference?.password, "\(Array(text.utf8))")
        }
    }

    @Test func severalAuthorizationFieldsReadAsOneJoinedValue() throws {
        let realm = Realm(name: "r", scheme: .basic, chain: LoginChain([]))
        let basic = basicAuthorization("joe", "welcome")
        var one = HTTPFields()
        one[.authorization] = basic
        #expect(realm.credentials(headers: one, query: nil).basic?.username == "joe")
        var two = HTTPFields()
        two.append(HTTPField(name: .authorization, value: basic))
        two.append(HTTPField(name: .authorization, value: basic))
        let joined = realm.credentials(headers: two, query: nil)
        #expect(joined.value == String(basic.dropFirst("Basic ".count)) + ", " + basic)
        #expect(joined.basic == nil)
    }

    @Test func aUserNameWithALineBreakIsNotSentUpstream() async throws {
        try await GatewayFixture.run(customModules: ["odd": LineBreakNameModule()], { upstream in
            GatewayConfiguration(
                realms: [RealmConfiguration(name: "odd", scheme: .basic, loginModules: [LoginModuleConfiguration(type: "odd", flag: .required)])],
                services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "odd")])
        }) { fixture async throws in
            let answer = try await fixture.get("/echo/x", headers: [("Authorization", basicAuthorization("eve", "x"))])
            #expect(answer.status == 500)
            #expect(String(decoding: answer.body, as: UTF8.self).contains(#""error":"server_error""#))
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("X-Injected"))
        }
    }
}
