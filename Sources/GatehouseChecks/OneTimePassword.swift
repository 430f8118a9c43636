import Crypto
import Foundation
import GatehouseProtocol

/// Time-based one-time passwords (RFC 6238): HOTP (RFC 4226) over the number of `period`-second steps since the
/// Unix epoch, with HMAC-SHA-1, -256 or -512 and 6 to 8 digits — what authenticator apps make from an `otpauth://`
/// URI.
public struct OneTimePassword: Sendable, Equatable {
    /// The HMAC's hash function.
    public enum Algorithm: String, Sendable, CaseIterable, Codable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    /// The shared secret (20 bytes for SHA-1, as RFC 4226 recommends, or more).
    public let secret: [UInt8]
    public let algorithm: Algorithm
    /// 6, 7 or 8.
    public let digits: Int
    /// Seconds a code lasts; 30 by default.
    public let period: Int

    public init(secret: [UInt8], algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30) {
        precondition((6...8).contains(digits) && period > 0, "6 to 8 digits, a positive period")
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// The time step of `epochMillis`.
    public func step(at epochMillis: Int64) -> Int64 {
        epochMillis / 1000 / Int64(period)
    }

    /// The code of time step `step` (RFC 4226 §5.3: the dynamic truncation of the HMAC of the big-endian counter).
    public func code(atStep step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8] = switch algorithm {
        case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: key))
        case .sha256: Array(HMAC<SHA256>.authenticationCode(for: counter, using: key))
        case .sha512: Array(HMAC<SHA512>.authenticationCode(for: counter, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The code valid at `epochMillis`.
    public func code(at epochMillis: Int64) -> String {
        code(atStep: step(at: epochMillis))
    }

    /// The step whose code `code` is, within `window` steps either side of `epochMillis`'s (RFC 6238 §5.2: a
    /// client's clock and the network's delay); `nil` when none. Every candidate is compared, each in constant time.
    public func matchingStep(of code: String, at epochMillis: Int64, window: Int = 1) -> Int64? {
        let given = code.filter { !$0.isWhitespace }
        let current = step(at: epochMillis)
        var found: Int64?
        for delta in -Int64(window)...Int64(window) {
            if ConstantTime.equals(given, self.code(atStep: current + delta)), found == nil { found = current + delta }
        }
        return found
    }

    /// The `otpauth://totp/` URI authenticator apps read (Google Authenticator's key URI format): the label
    /// `issuer:account`, the secret in base32 without padding, and the parameters.
    public func uri(issuer: String, account: String) -> String {
        let label = Self.percentEncoded(issuer) + ":" + Self.percentEncoded(account)
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(Self.percentEncoded(issuer))"
            + "&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)"
    }

    private static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// Base32 (RFC 4648 §6), as `otpauth://` secrets are written: upper case, no padding; reading accepts lower case,
/// spaces and padding.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of `text`; `nil` for a character outside the alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: " ") && character != UInt8(ascii: "=") {
            guard let index = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(index)
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return output
    }
}
