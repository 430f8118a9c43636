import Crypto
import Foundation

/// Comparison of secrets whose duration does not depend on where the inputs differ.
package enum ConstantTime {
    /// Whether `a` and `b` are equal, in time independent of their contents.
    ///
    /// Both sides are hashed first, so the comparison also hides the length of the secret.
    package static func equals(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let ha = SHA256.hash(data: Data(a.utf8))
        let hb = SHA256.hash(data: Data(b.utf8))
        var difference: UInt8 = 0
        for (x, y) in zip(ha, hb) { difference |= x ^ y }
        return difference == 0
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends on their lengths only (the lengths are not
    /// hidden: unequal ones answer at once): for comparing a secret with one of the same origin (a credential a
    /// connection sent before), where hashing would cost more than the comparison saves.
    @inline(never)
    package static func sameBytes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in sameBytes(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// ``sameBytes(_:_:)-(String,String)`` over bytes in memory (a credential found in place in a request's bytes).
    @inline(never)
    package static func sameBytes(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<x.count { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
