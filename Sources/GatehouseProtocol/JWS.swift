import Crypto
import CryptoExtras
public import Foundation

/// Why a JWS was refused: a stable ``Code`` (codes can be added without breaking a caller's code) and, for an
/// unsupported algorithm, its name.
public struct JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the JWS.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// Not three base64url parts of JSON.
        public static let malformed = Code(description: "malformed")
        /// The header names an algorithm other than RS256.
        public static let unsupportedAlgorithm = Code(description: "unsupportedAlgorithm")
        /// The key is not a usable RSA key of the size required.
        public static let invalidKey = Code(description: "invalidKey")
        /// The signature does not verify.
        public static let badSignature = Code(description: "badSignature")
    }

    public let code: Code
    /// The algorithm the header named, for ``Code/unsupportedAlgorithm``.
    public let algorithm: String?

    init(_ code: Code, algorithm: String? = nil) {
        self.code = code
        self.algorithm = algorithm
    }

    public static let malformed = JWSError(.malformed)
    public static let invalidKey = JWSError(.invalidKey)
    public static let badSignature = JWSError(.badSignature)
    public static func unsupportedAlgorithm(_ name: String) -> JWSError { JWSError(.unsupportedAlgorithm, algorithm: name) }

    public var description: String { algorithm.map { "\(code) (\($0.prefix(16)))" } ?? code.description }
}

/// The protected header of a MobileFirst JWS: `{"alg":"RS256","jwk":{...}}`, and `typ` where a type is named
/// (`dpop+jwt`: ``ProofOfPossession``).
public struct JWSHeader: Codable, Sendable {
    public var alg: String
    public var jwk: RSAPublicJWK?
    public var typ: String?

    public init(alg: String = "RS256", jwk: RSAPublicJWK?, typ: String? = nil) {
        self.alg = alg
        self.jwk = jwk
        self.typ = typ
    }
}

extension JWSHeader: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let alg = json.requiredString("alg"), let jwk = json.optional("jwk", as: RSAPublicJWK.self),
              let typ = json.optionalString("typ")
        else { return nil }
        self.init(alg: alg, jwk: jwk, typ: typ)
    }
}

/// A JWS in its three parts (header, payload, signature), each base64url.
///
/// Registration sends the parts as a JSON object (`signedRegistrationData`); client assertions send the
/// compact form `header.payload.signature`.
public struct JWS: Codable, Sendable {
    public var header: String
    public var payload: String
    public var signature: String

    public init(header: String, payload: String, signature: String) {
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    /// Parses the compact form.
    public init(compact: String) throws(JWSError) {
        // Split over UTF-8 bytes: `String.split` compares Characters (grapheme breaking), measurably slow here.
        let parts = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed }
        self.init(header: String(Substring(parts[0])), payload: String(Substring(parts[1])), signature: String(Substring(parts[2])))
    }

    /// The compact form `header.payload.signature`.
    public var compact: String { "\(header).\(payload).\(signature)" }

    /// Signs `payload` with RS256, putting the public key (with `kid`) and `typ` (when given) in the header.
    public static func sign(_ payload: some Encodable, with key: ClientKeyPair, kid: String?, typ: String? = nil) throws -> JWS {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = Base64URL.encode(try encoder.encode(JWSHeader(jwk: try key.jwk(kid: kid), typ: typ)))
        let body = Base64URL.encode(try encoder.encode(payload))
        let signature = try key.sign(Data("\(header).\(body)".utf8))
        return JWS(header: header, payload: body, signature: Base64URL.encode(signature))
    }

    /// The decoded header.
    public func decodedHeader() throws(JWSError) -> JWSHeader {
        try Self.decodeJSON(JWSHeader.self, header)
    }

    /// The decoded payload.
    public func decodedPayload<T: Decodable>(as type: T.Type) throws(JWSError) -> T {
        try Self.decodeJSON(type, payload)
    }

    /// Verifies the RS256 signature against `key` (2048 bits or more).
    ///
    /// The signature covers the header and payload parts exactly as received, in whichever base64 alphabet the
    /// client wrote them (the MobileFirst web SDK writes standard base64 with padding).
    public func verify(with key: RSAPublicJWK) throws(JWSError) {
        try requireRS256()
        let publicKey = try key.publicKey()
        let valid = publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: try signatureBytes()),
            for: SHA256.hash(data: signingInput),
            padding: .insecurePKCS1v1_5
        )
        guard valid else { throw .badSignature }
    }

    /// Throws unless the header names RS256.
    public func requireRS256() throws(JWSError) {
        let header = try decodedHeader()
        guard header.alg == "RS256" else { throw .unsupportedAlgorithm(header.alg) }
    }

    /// The bytes the signature covers: `header.payload` as received.
    public var signingInput: Data { Data("\(header).\(payload)".utf8) }

    /// The decoded signature.
    public func signatureBytes() throws(JWSError) -> Data {
        guard let bytes = Base64URL.decode(signature) else { throw .malformed }
        return bytes
    }

    private static func decodeJSON<T: Decodable>(_ type: T.Type, _ part: String) throws(JWSError) -> T {
        guard let data = Base64URL.decode(part) else { throw .malformed }
        do {
            return try SharedJSONCoders.decode(type, from: data)
        } catch {
            throw .malformed
        }
    }
}

extension JWS: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let header = json.requiredString("header"), let payload = json.requiredString("payload"),
              let signature = json.requiredString("signature")
        else { return nil }
        self.init(header: header, payload: payload, signature: signature)
    }
}
