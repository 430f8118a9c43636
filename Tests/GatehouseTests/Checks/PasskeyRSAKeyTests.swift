import Crypto
import Foundation
@testable import GatehouseChecks
import GatehouseProtocol
import Testing

/// Hostile input round 3, finding 10 (issue 54): a degenerate passkey RSA key — `n = 3` padded with zero bytes to 256
/// bytes, `e = 1` — was accepted at registration (the modulus's bytes were counted, not its bits; the exponent was not
/// looked at). The keys here are made by openssl (`genpkey`), a tool we did not write, and changed as an attacker
/// would: padded, their exponent replaced.
@Suite(.timeLimit(.minutes(3))) struct PasskeyRSAKeyTests {
    /// An RSA key's modulus from openssl: `genpkey` of `bits`, then `rsa -modulus`.
    static func opensslModulus(bits: Int) async throws -> [UInt8] {
        let folder = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = folder + "/key.pem"
        let generated = try await runOffThePool("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", key])
        try #require(generated.status == 0, "\(generated.output)")
        let printed = try await runOffThePool("/usr/bin/openssl", ["rsa", "-in", key, "-noout", "-modulus"])
        let hex = try #require(printed.output.split(separator: "\n").first { $0.hasPrefix("Modulus=") }?.dropFirst("Modulus=".count))
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return bytes
    }

    /// A `none` attestation of a credential with the RSA key (`n`, `e`), as an authenticator sends it.
    static func attestation(n: [UInt8], e: [UInt8]) -> [UInt8] {
        let cose = SoftwareAuthenticator.cbor(.map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(n)), (.int(-2), .bytes(e))]))
        let id: [UInt8] = Array(repeating: 9, count: 16)
        var data = Array(SHA256.hash(data: Data("localhost".utf8)))
        data.append(0x05 | 0x40)
        data += [0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, UInt8(id.count)] + id + cose
        return SoftwareAuthenticator.cbor(.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(data))]))
    }

    static func refusal(n: [UInt8], e: [UInt8]) -> String? {
        WebAuthnProbe.refusal(attestation: attestation(n: n, e: e), expecting: WebAuthnProbe.expectation)
    }

    @Test func degenerateRSAKeysAreRefusedAtRegistration() async throws {
        let f4: [UInt8] = [0x01, 0x00, 0x01]
        let strong = try await Self.opensslModulus(bits: 2048)
        #expect(strong.count == 256)
        // openssl's 2048-bit key, as a platform authenticator sends it: registered.
        #expect(Self.refusal(n: strong, e: f4) == nil)
        #expect(Self.refusal(n: [0] + strong, e: [0] + f4) == nil, "a leading zero byte (DER's sign byte) changes nothing")
        // The attack: n = 3 padded to 256 bytes, e = 1.
        let three = [UInt8](repeating: 0, count: 255) + [3]
        #expect(Self.refusal(n: three, e: [1])?.contains("2-bit modulus") == true, "\(Self.refusal(n: three, e: [1]) ?? "accepted")")
        // A 1024-bit key padded to 256 bytes.
        let weak = try await Self.opensslModulus(bits: 1024)
        #expect(Self.refusal(n: [UInt8](repeating: 0, count: 256 - weak.count) + weak, e: f4)?.contains("1024-bit modulus") == true)
        // The strong modulus with exponents that make signatures forgeable or are no RSA exponent.
        for exponent: [UInt8] in [[1], [0, 0, 1], [2], [0x01, 0x00, 0x00], [], [1, 0, 0, 0, 1]] {
            #expect(Self.refusal(n: strong, e: exponent)?.contains("exponent") == true, "e = \(exponent)")
        }
        // An even modulus is no RSA modulus.
        var even = strong
        even[255] &= 0xFE
        #expect(Self.refusal(n: even, e: f4) != nil)
    }
}
