public import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS part.
///
/// Written over bytes with lookup tables: every registration, assertion and token passes through here several
/// times, and Foundation's string replacements on Linux cost more than the cryptography around them.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The 6-bit value of each byte (both alphabets: `-_` and `+/`); 0xFF for a byte of neither.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some DataProtocol) -> String {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(alphabet[Int(group >> 6 & 63)])
            output.append(alphabet[Int(group & 63)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let group = UInt32(input[index]) << 16
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
        case 2:
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(alphabet[Int(group >> 6 & 63)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url or standard base64 (the MobileFirst web SDK writes JWS parts with `btoa`), with or
    /// without padding (`=` only at the end); `nil` when the text is neither.
    public static func decode(_ text: some StringProtocol) -> Data? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(utf8: $0) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode(utf8: $0) }
    }

    /// ``decode(_:)`` over the text's UTF-8 bytes (not generic: the loop is compiled for bytes in memory).
    public static func decode(utf8 text: UnsafeBufferPointer<UInt8>) -> Data? {
        var output = [UInt8]()
        output.reserveCapacity(text.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        var length = 0
        var padded = false
        for byte in text {
            if byte == UInt8(ascii: "=") {
                padded = true   // padding: only more of it may follow
                continue
            }
            let value = values[Int(byte)]
            guard !padded, value != 0xFF else { return nil }   // `=` before the end, another alphabet, whitespace
            group = group << 6 | UInt32(value)
            bits += 6
            length += 1
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        guard length % 4 != 1 else { return nil }
        return Data(output)
    }
}
