import Crypto
import Foundation

/// Comparison of secrets whose duration does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, in time independent of their contents.
    ///
    /// Both sides are hashed first, so the comparison also hides the length of the secret.
    public static func equals(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let ha = SHA256.hash(data: Data(a.utf8))
        let hb = SHA256.hash(data: Data(b.utf8))
        var difference: UInt8 = 0
        for (x, y) in zip(ha, hb) { difference |= x ^ y }
        return difference == 0
    }
}
