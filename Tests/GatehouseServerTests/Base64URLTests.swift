import Foundation
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// The byte-level base64url and form decoding agree with Foundation's (the implementations they replaced) on
/// thousands of generated inputs, hostile ones included.
@Suite(.timeLimit(.minutes(3))) struct Base64URLTests {
    /// The former implementation, over Foundation's strings.
    static func referenceEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func referenceDecode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !s.contains("=") || s.hasSuffix("=") else { return nil }
        s = s.replacingOccurrences(of: "=", with: "")
        switch s.count % 4 {
        case 2: s += "=="
        case 3: s += "="
        case 1: return nil
        default: break
        }
        return Data(base64Encoded: s)
    }

    static func referenceForm(_ part: Substring) -> String {
        let spaced = part.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    @Test func encodingAndDecodingAgreeWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == Self.referenceEncode(bytes))
            #expect(Base64URL.decode(encoded) == Data(bytes))
            // Standard base64 with padding, as the web SDK's btoa writes it.
            #expect(Base64URL.decode(Data(bytes).base64EncodedString()) == Data(bytes))
        }
    }

    @Test func hostileTextDecodesAsFoundationWouldOrNotAtAll() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCabcxyz0189-_+/= .%\n\u{e9}".unicodeScalars)
        for _ in 0..<3000 {
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...13, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }))
            let ours = Base64URL.decode(text)
            let reference = Self.referenceDecode(text)
            let paddingInside = text.reversed().drop(while: { $0 == "=" }).contains("=")
            if let reference, !paddingInside {
                #expect(ours == reference, "\(text.debugDescription)")
            } else if paddingInside {
                #expect(ours == nil, "`=` inside the text, not only at its end: \(text.debugDescription)")
            } else if let ours {
                // Foundation refuses non-zero leftover bits; accepting them changes no decoded byte of a valid part.
                #expect(Base64URL.encode(ours).count <= text.count, "\(text.debugDescription)")
            }
        }
    }

    @Test func formComponentsDecodeAsFoundationWould() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09+%2Bg%C3%A9%FF%%41-._~ =&".unicodeScalars)
        for _ in 0..<3000 {
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...16, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }))
            let ours = RequestReading.decodeComponent(Substring(text))
            let reference = Self.referenceForm(Substring(text))
            let asSent = text.replacingOccurrences(of: "+", with: " ")
            if reference.contains("\u{FFFD}") {
                // Foundation on Linux repairs some invalid UTF-8 and refuses other: Gatehouse keeps all of it as sent.
                #expect(ours == asSent, "\(text.debugDescription)")
            } else {
                #expect(ours == reference || (reference == asSent && ours == asSent), "\(text.debugDescription)")
            }
        }
    }

    @Test func formsParseAsSplittingOnAmpersandsAndFirstEqualsWould() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab=&&+%41%é日=".unicodeScalars)
        for _ in 0..<3000 {
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...24, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }))
            var reference: [String: String] = [:]
            for pair in text.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = RequestReading.decodeComponent(parts[0])
                if reference[name] == nil { reference[name] = parts.count > 1 ? RequestReading.decodeComponent(parts[1]) : "" }
            }
            #expect(RequestReading.parseForm(text) == reference, "\(text.debugDescription)")
        }
    }
}
