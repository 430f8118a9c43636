import Foundation
@testable import GatehouseServer
import Testing

/// The random bytes of codes and token ids: the lengths asked for, never repeated, across the pool's refills.
@Suite(.timeLimit(.minutes(3))) struct SecureRandomTests {
    @Test func bytesAreFreshAcrossRefills() {
        var seen = Set<[UInt8]>()
        var ones = 0
        // 1,000 × 16 bytes: four refills of the 4 KiB pool; a 4 KiB draw right after.
        for _ in 0..<1000 {
            let bytes = SecureRandom.bytes(16)
            #expect(bytes.count == 16)
            seen.insert(bytes)
            ones += bytes.reduce(0) { $0 + $1.nonzeroBitCount }
        }
        #expect(seen.count == 1000)
        // 128,000 bits: about half set (a pool left zeroed, or wiped before use, would show here).
        #expect(ones > 60_000 && ones < 68_000)
        #expect(SecureRandom.bytes(4096).count == 4096)
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(AuthorizationService.randomToken(bytes: 32).count == 43)
    }

    @Test func uuidsAreVersion4InLowercaseTextAndDistinct() throws {
        var seen = Set<String>()
        var ones = 0
        for _ in 0..<1000 {
            let text = SecureRandom.uuidString()
            let uuid = try #require(UUID(uuidString: text), "\(text) reads as a UUID")
            #expect(uuid.uuidString.lowercased() == text)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version 4")
            #expect(bytes[8] >> 6 == 0b10, "RFC 9562 variant")
            ones += bytes.reduce(0) { $0 + $1.nonzeroBitCount } - 2   // the version's and the variant's fixed ones
            seen.insert(text)
        }
        #expect(seen.count == 1000)
        // 122 random bits each: about half set.
        #expect(ones > 57_000 && ones < 65_000)
    }
}
