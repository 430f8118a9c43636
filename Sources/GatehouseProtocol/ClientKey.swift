import Crypto
public import CryptoExtras
public import Foundation

/// The public half of a client's RSA key pair, as it travels in a JWS header (`{"kty":"RSA","n":..,"e":..}`).
///
/// MobileFirst clients generate a key pair on first registration and send the public key inside the JWS
/// header of the signed registration data; later client assertions are verified against the registered key.
public struct RSAPublicJWK: Codable, Sendable, Hashable {
    public var kty: String
    /// The modulus, base64url; may carry a leading zero byte (Java's `BigInteger.toByteArray()`).
    public var n: String
    /// The public exponent, base64url.
    public var e: String
    /// The client id, once there is one.
    public var kid: String?

    public init(n: String, e: String, kid: String? = nil) {
        self.kty = "RSA"
        self.n = n
        self.e = e
        self.kid = kid
    }

    /// The key for signature verification. Keys under 2048 bits are refused.
    public func publicKey() throws(JWSError) -> _RSA.Signing.PublicKey {
        guard kty == "RSA", let modulus = Base64URL.decode(n), let exponent = Base64URL.decode(e) else {
            throw .invalidKey
        }
        let trimmed = modulus.drop(while: { $0 == 0 })
        do {
            return try _RSA.Signing.PublicKey(n: Data(trimmed), e: exponent)
        } catch {
            throw .invalidKey
        }
    }

    /// The modulus length in bits (0 when `n` is not base64).
    public var modulusBits: Int {
        guard let modulus = Base64URL.decode(n) else { return 0 }
        let significant = modulus.drop(while: { $0 == 0 })
        guard let first = significant.first else { return 0 }
        return significant.count * 8 - first.leadingZeroBitCount
    }

    /// The same key without its `kid`, for comparing keys.
    public var withoutKid: RSAPublicJWK { RSAPublicJWK(n: n, e: e) }
}

extension RSAPublicJWK: JSONTextWritable {
    package func write(to text: inout JSONText) {
        text.object { key in
            key.member("kty", kty)
            key.member("n", n)
            key.member("e", e)
            key.member("kid", kid)
        }
    }
}

extension RSAPublicJWK: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let kty = json.requiredString("kty"), let n = json.requiredString("n"), let e = json.requiredString("e"),
              let kid = json.optionalString("kid")
        else { return nil }
        self.init(n: n, e: e, kid: kid)
        self.kty = kty
    }
}

/// A client's RSA key pair (2048 bits or more), as kept by the SDK's key store.
public struct ClientKeyPair: Sendable {
    public let privateKey: _RSA.Signing.PrivateKey

    /// Generates a new 2048-bit key pair.
    public init() throws {
        privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// Loads a key pair from its PEM form.
    public init(pem: String) throws {
        privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
    }

    /// The PEM form, for a key store.
    public var pem: String { privateKey.pemRepresentation }

    /// The public key as a JWK.
    public func jwk(kid: String? = nil) throws -> RSAPublicJWK {
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        return RSAPublicJWK(
            n: Base64URL.encode(primitives.modulus),
            e: Base64URL.encode(primitives.publicExponent),
            kid: kid
        )
    }

    /// Signs `data` with RS256 (RSASSA-PKCS1-v1_5 with SHA-256).
    public func sign(_ data: some DataProtocol) throws -> Data {
        try privateKey.signature(for: SHA256.hash(data: Data(data)), padding: .insecurePKCS1v1_5).rawRepresentation
    }
}
