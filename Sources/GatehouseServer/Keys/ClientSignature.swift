import BigInt
import Crypto
import Foundation
import GatehouseProtocol

/// Verification of a client's RS256 signatures under its application's key-size policy.
///
/// Keys of 2048 bits or more are verified by swift-crypto. An application whose policy sets
/// `minimumClientKeyBits` below 2048 (legacy MobileFirst Android apps generate 512-bit keys, `WLOAuthCertManager`)
/// also gets shorter keys verified, by ``LegacyRSA``; nothing else changes for it.
enum ClientSignature {
    /// The smallest key any policy may allow.
    static let smallestAllowedBits = 512
    /// The default minimum.
    static let defaultMinimumBits = 2048

    /// Verifies `jws` against `key`, refusing keys shorter than `minimumBits`.
    static func verify(_ jws: JWS, with key: RSAPublicJWK, minimumBits: Int) throws(JWSError) {
        let bits = key.modulusBits
        if bits >= defaultMinimumBits || bits < max(minimumBits, smallestAllowedBits) {
            try jws.verify(with: key)   // refuses keys under 2048 bits itself
            return
        }
        try jws.requireRS256()
        try LegacyRSA.verify(signature: try jws.signatureBytes(), of: jws.signingInput, key: key)
    }
}

/// RSASSA-PKCS1-v1_5 with SHA-256 verification (RFC 8017 §8.2.2) for keys shorter than swift-crypto accepts.
///
/// Only a public-key operation: the signature is raised to the public exponent and the result compared, whole,
/// with the encoding the message must have (no parsing of the decrypted block, so no Bleichenbacher-style
/// forgery on lax parsing).
enum LegacyRSA {
    /// The DER prefix of a SHA-256 `DigestInfo` (RFC 8017 §9.2, note 1).
    private static let sha256DigestInfo: [UInt8] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
    ]

    static func verify(signature: Data, of message: Data, key: RSAPublicJWK) throws(JWSError) {
        guard key.kty == "RSA", let modulusBytes = Base64URL.decode(key.n), let exponentBytes = Base64URL.decode(key.e) else {
            throw .invalidKey
        }
        let n = BigUInt(Data(modulusBytes.drop(while: { $0 == 0 })))
        let e = BigUInt(exponentBytes)
        let k = (n.bitWidth + 7) / 8
        // A sane public key: odd modulus of at least 512 bits, odd exponent 3 ≤ e < n.
        guard n.bitWidth >= ClientSignature.smallestAllowedBits, n[bitAt: 0], e >= 3, e[bitAt: 0], e < n else { throw .invalidKey }
        guard signature.count == k else { throw .badSignature }
        let s = BigUInt(signature)
        guard s < n else { throw .badSignature }
        let decrypted = s.power(e, modulus: n).serialize()
        let encoded = [UInt8](repeating: 0, count: k - decrypted.count) + [UInt8](decrypted)
        let digest = [UInt8](SHA256.hash(data: message))
        let t = sha256DigestInfo + digest
        guard k >= t.count + 11 else { throw .invalidKey }
        let expected: [UInt8] = [0x00, 0x01] + [UInt8](repeating: 0xff, count: k - t.count - 3) + [0x00] + t
        guard encoded == expected else { throw .badSignature }   // public values: no constant time needed
    }
}
