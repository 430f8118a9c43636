import Crypto
import Foundation

/// A pin of a server's public key as HTTP Public Key Pinning (RFC 7469 `pin-sha256`) and OkHttp write it: the SHA-256
/// of the certificate's SubjectPublicKeyInfo (DER), in base64 — `sha256/` in front optional. A pin outlives a
/// certificate renewed with the same key; pin a backup key too, so that a lost key does not lock the app out.
///
/// Its value for a server's certificate: `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der
/// | openssl dgst -sha256 -binary | base64`.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The SHA-256 digest (32 bytes).
    public let digest: [UInt8]

    /// The pin of a SubjectPublicKeyInfo (DER).
    public init(spki: some Sequence<UInt8>) {
        digest = Array(SHA256.hash(data: Array(spki)))
    }

    /// A pin as text: base64 (or base64url) of 32 bytes, `sha256/` in front or not.
    public init?(_ text: String) {
        var text = Substring(text.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("sha256/") { text = text.dropFirst("sha256/".count) }
        let unpadded = text.replacingOccurrences(of: "=", with: "")
        guard let bytes = Base64URL.decode(unpadded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")),
              bytes.count == 32 else { return nil }
        digest = Array(bytes)
    }

    /// `sha256/` and the digest in base64.
    public var description: String { "sha256/" + Data(digest).base64EncodedString() }
}
