import Crypto

/// A certificate's SHA-256 thumbprint as RFC 8705 writes it (`x5t#S256`): the base64url SHA-256 of its DER bytes,
/// without padding. What a certificate-bound token carries, and what a self-signed TLS client is registered by.
public enum CertificateThumbprint {
    /// The thumbprint of the certificate whose DER encoding is `der`.
    public static func sha256(der: some Sequence<UInt8>) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(der))))
    }

    /// Whether `text` has a thumbprint's shape: 43 base64url characters (32 bytes).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64URL.decode(text)?.count == 32
    }
}
