import Crypto
import CryptoExtras
import Foundation
import GatehouseProtocol

/// WebAuthn (Level 2) as a relying party verifies it — the subset passkeys need: registration (§7.1) with `none`
/// attestation or `packed` self-attestation, authentication (§7.2), and ES256 (P-256) and RS256 credential keys.
/// Attestation certificates (`x5c`) are not checked, so they are refused rather than trusted: ``Passkey`` asks for
/// `attestation: "none"`.
enum WebAuthn {
    /// Why a ceremony was refused, for the log and the user's error message.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// What the relying party expects of a ceremony.
    struct Expectation: Sendable {
        /// The RP ID: the site's domain (`example.com`), never an IP address.
        var rpID: String
        /// The origins the pages run on (`https://example.com`).
        var origins: Set<String>
        /// The challenge this ceremony was given.
        var challenge: [UInt8]
        /// Whether the authenticator must have verified the user (PIN, biometrics).
        var userVerification: Bool
    }

    /// A credential's public key, as kept with the user's factor.
    struct PublicKey: Codable, Equatable, Sendable {
        /// COSE algorithm: -7 (ES256) or -257 (RS256).
        var alg: Int
        /// ES256: the point's coordinates (base64url); RS256: modulus and exponent (base64url).
        var x: String?
        var y: String?
        var n: String?
        var e: String?

        /// The key of a COSE_Key map (RFC 9053): EC2 on P-256 with ES256, or RSA with RS256.
        init(cose: CBOR) throws(Failure) {
            switch (cose[1]?.integer, cose[3]?.integer) {
            case (2, -7):
                guard cose[-1]?.integer == 1, let x = cose[-2]?.byteString, let y = cose[-3]?.byteString, x.count == 32, y.count == 32 else {
                    throw Failure("the credential's EC2 key is not a P-256 point")
                }
                guard (try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)) != nil else {
                    throw Failure("the credential's EC2 key is not on the curve")
                }
                self.init(alg: -7, x: Base64URL.encode(x), y: Base64URL.encode(y))
            case (3, -257):
                guard let n = cose[-1]?.byteString, let e = cose[-2]?.byteString else { throw Failure("the credential's RSA key is missing") }
                let (modulus, exponent) = try Self.rsaParameters(n: n, e: e)
                self.init(alg: -257, n: Base64URL.encode(modulus), e: Base64URL.encode(exponent))
            default:
                throw Failure("the credential's key is neither ES256 (EC2, P-256) nor RS256")
            }
        }

        /// The bounds of an RSA key's modulus, in bits: 2048 at least, 8192 at most (its verifications bounded).
        static let rsaModulusBits = 2048...8192

        /// An RSA key's modulus and exponent without leading zero bytes, when they make a key worth trusting: a
        /// modulus of ``rsaModulusBits`` counted in *bits* (zero bytes in front made `n = 3` a "2048-bit" key
        /// before), odd; an exponent odd, 3 or more and at most 32 bits (`e = 1` made every signature its own
        /// message; issue 54, finding 10), below the modulus; and the pair one swift-crypto takes.
        static func rsaParameters(n: [UInt8], e: [UInt8]) throws(Failure) -> (modulus: [UInt8], exponent: [UInt8]) {
            let modulus = Array(n.drop { $0 == 0 }), exponent = Array(e.drop { $0 == 0 })
            let bits = modulus.first.map { (modulus.count - 1) * 8 + (8 - $0.leadingZeroBitCount) } ?? 0
            guard rsaModulusBits.contains(bits), modulus.last.map({ $0 & 1 == 1 }) == true else {
                throw Failure("the credential's RSA key has a \(bits)-bit modulus: \(rsaModulusBits.lowerBound) to \(rsaModulusBits.upperBound) bits, odd, are accepted")
            }
            guard (1...4).contains(exponent.count), exponent.last.map({ $0 & 1 == 1 }) == true, exponent.count > 1 || exponent[0] >= 3 else {
                throw Failure("the credential's RSA key has an unusable exponent: an odd number from 3 to 2^32 - 1 is accepted")
            }
            guard (try? _RSA.Signing.PublicKey(n: modulus, e: exponent)) != nil else {
                throw Failure("the credential's RSA key is not a valid public key")
            }
            return (modulus, exponent)
        }

        init(alg: Int, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil) {
            self.alg = alg
            self.x = x
            self.y = y
            self.n = n
            self.e = e
        }

        /// Whether `signature` (DER for ES256, PKCS #1 v1.5 for RS256) signs `data` with this key.
        func verifies(_ signature: [UInt8], of data: [UInt8]) -> Bool {
            switch alg {
            case -7:
                guard let x = x.flatMap(Base64URL.decode), let y = y.flatMap(Base64URL.decode),
                      let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + Array(x) + Array(y)),
                      let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
                else { return false }
                return key.isValidSignature(parsed, for: data)
            case -257:
                guard let n = n.flatMap(Base64URL.decode), let e = e.flatMap(Base64URL.decode),
                      let key = try? _RSA.Signing.PublicKey(n: n, e: e)
                else { return false }
                return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
            default:
                return false
            }
        }
    }

    /// The authenticator data (§6.1): the RP ID's hash, flags, counter and, at registration, the new credential.
    struct AuthenticatorData {
        let rpIDHash: [UInt8]
        let flags: UInt8
        let signCount: UInt32
        /// At registration (flag AT): the credential's id and COSE key.
        let credentialID: [UInt8]?
        let credentialKey: CBOR?

        var userPresent: Bool { flags & 0x01 != 0 }
        var userVerified: Bool { flags & 0x04 != 0 }

        init(_ bytes: [UInt8]) throws(Failure) {
            guard bytes.count >= 37 else { throw Failure("the authenticator data is too short") }
            rpIDHash = Array(bytes[0..<32])
            flags = bytes[32]
            signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
            guard flags & 0x40 != 0 else {
                credentialID = nil
                credentialKey = nil
                return
            }
            // aaguid (16), length (2), id, COSE key.
            guard bytes.count >= 55 else { throw Failure("the authenticator data's credential is cut short") }
            let length = Int(bytes[53]) << 8 | Int(bytes[54])
            guard length > 0, length <= 1023, bytes.count >= 55 + length else { throw Failure("the credential id is malformed") }
            credentialID = Array(bytes[55..<55 + length])
            do {
                credentialKey = try CBOR.decode(bytes, from: 55 + length).value
            } catch {
                throw Failure("the credential's key is not CBOR")
            }
        }
    }

    /// Checks the client data (§7.1 steps 7-10, §7.2 steps 11-14): the ceremony's type, its challenge, an allowed
    /// origin.
    static func checkClientData(_ json: [UInt8], type: String, expecting: Expectation) throws(Failure) {
        guard let data = try? JSONDecoder().decode(JSON.self, from: Data(json)) else { throw Failure("the client data is not JSON") }
        guard data["type"]?.stringValue == type else { throw Failure("the client data is not of a \(type) ceremony") }
        guard let challenge = data["challenge"]?.stringValue.flatMap(Base64URL.decode),
              Array(challenge).withUnsafeBytes({ given in expecting.challenge.withUnsafeBytes { ConstantTime.sameBytes(given, $0) } })
        else { throw Failure("the client data answers another challenge") }
        guard let origin = data["origin"]?.stringValue, expecting.origins.contains(origin) else {
            throw Failure("the page's origin \(data["origin"]?.stringValue?.prefix(100) ?? "none") is not one of the check's origins")
        }
        // A ceremony in a frame of another site (§5.10.6's crossOrigin): not one of the check's own pages.
        if data["crossOrigin"]?.boolValue == true { throw Failure("the ceremony ran in a frame of another site") }
    }

    /// The authenticator data's RP ID hash and flags against the expectation (§7.1 steps 13-15, §7.2 steps 15-17).
    static func checkFlags(_ data: AuthenticatorData, expecting: Expectation) throws(Failure) {
        guard data.rpIDHash == Array(SHA256.hash(data: Data(expecting.rpID.utf8))) else {
            throw Failure("the authenticator signed for another relying party than \(expecting.rpID)")
        }
        guard data.userPresent else { throw Failure("the authenticator did not see the user") }
        if expecting.userVerification, !data.userVerified { throw Failure("the authenticator did not verify the user") }
    }

    /// A registration (§7.1): the new credential's id, key and counter.
    static func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], expecting: Expectation) throws(Failure)
        -> (credentialID: [UInt8], key: PublicKey, signCount: UInt32)
    {
        try checkClientData(clientDataJSON, type: "webauthn.create", expecting: expecting)
        let attestation: CBOR
        do {
            attestation = try CBOR.decodeWhole(attestationObject)
        } catch {
            throw Failure("the attestation object is not CBOR")
        }
        guard let format = attestation["fmt"]?.textString, let bytes = attestation["authData"]?.byteString,
              case .map(let statement)? = attestation["attStmt"] else { throw Failure("the attestation object lacks fmt, authData or attStmt") }
        let data = try AuthenticatorData(bytes)
        try checkFlags(data, expecting: expecting)
        guard let credentialID = data.credentialID, let cose = data.credentialKey else { throw Failure("the registration carries no credential") }
        let key = try PublicKey(cose: cose)
        switch format {
        case "none":
            guard statement.isEmpty else { throw Failure("a none attestation has a statement") }
        case "packed":
            let members = CBOR.map(statement)
            guard members["x5c"] == nil else {
                throw Failure("attestation certificates are not checked here: register with attestation \"none\"")
            }
            guard members["alg"]?.integer == key.alg, let signature = members["sig"]?.byteString,
                  key.verifies(signature, of: bytes + Array(SHA256.hash(data: Data(clientDataJSON))))
            else { throw Failure("the packed self-attestation's signature does not verify") }
        default:
            throw Failure("attestation format \(format.prefix(32)) is not supported (none, packed)")
        }
        return (credentialID, key, data.signCount)
    }

    /// An authentication (§7.2) with a credential of `key` whose counter was `storedCount`: the new counter.
    static func verifyAssertion(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], key: PublicKey,
                                storedCount: UInt32, expecting: Expectation) throws(Failure) -> UInt32 {
        try checkClientData(clientDataJSON, type: "webauthn.get", expecting: expecting)
        let data = try AuthenticatorData(authenticatorData)
        try checkFlags(data, expecting: expecting)
        guard key.verifies(signature, of: authenticatorData + Array(SHA256.hash(data: Data(clientDataJSON)))) else {
            throw Failure("the signature does not verify with the credential's key")
        }
        // §7.2 step 21: a counter that does not grow is a cloned authenticator's (both zero: it keeps none).
        if data.signCount != 0 || storedCount != 0, data.signCount <= storedCount {
            throw Failure("the authenticator's counter went back (\(data.signCount) after \(storedCount)): a cloned authenticator")
        }
        return data.signCount
    }
}
