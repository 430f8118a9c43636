import BigInt
import Crypto
import Foundation
import GatehouseProtocol

/// What the official MobileFirst 8.0 web SDK (`ibmmfpf.js`) puts on the wire, written from its source:
/// `WL.Crypto.signJWS` encodes header and payload with `btoa` (standard base64 **with** `+`, `/`, `=`),
/// signs `btoa(header) + "." + btoa(payload)` and appends `btoa(signature)`; the header's `jwk` is WebCrypto's
/// export (`alg`, `e`, `ext`, `key_ops`, `kty`, `n`, plus `kid` once registered); the registration payload has
/// no `version`; the `redirect_uri` is relative.
enum WebSDKWire {
    /// Standard base64 with padding, as `btoa` writes it.
    static func btoa(_ data: some DataProtocol) -> String { Data(data).base64EncodedString() }

    /// A JWS in the web SDK's form, signed by `sign` (over the exact string sent).
    static func signJWS(_ payload: JSON, jwk: JSONObject, kid: String?, sign: (Data) throws -> Data) throws -> JWS {
        var key = jwk
        if let kid { key["kid"] = .string(kid) }
        let header = btoa(try JSONEncoder().encode(JSON.object(["alg": "RS256", "jwk": .object(key)])))
        let body = btoa(try JSONEncoder().encode(payload))
        return JWS(header: header, payload: body, signature: btoa(try sign(Data("\(header).\(body)".utf8))))
    }

    /// WebCrypto's JWK export of `key`.
    static func webCryptoJWK(_ key: ClientKeyPair) throws -> JSONObject {
        let jwk = try key.jwk()
        return ["alg": "RS256", "e": .string(jwk.e), "ext": true, "key_ops": .array([]), "kty": "RSA", "n": .string(jwk.n)]
    }

    /// The web SDK's registration payload: `{"device":{id,platform,hardware},"application":{clientPlatform,id}}`.
    static func registrationPayload(app: String = "com.sample.web") -> JSON {
        [
            "device": ["id": "2d5fb2e8-6d6e-4a31-9c5e-0c7c3a0f4a1b", "platform": "Linux x86_64", "hardware": "Chrome 120"],
            "application": ["clientPlatform": "web", "id": .string(app)],
        ]
    }

    /// The body of `POST registration/v1/self` as the web SDK sends it (it also sends the unsigned data).
    static func registrationBody(_ jws: JWS, payload: JSON) throws -> Data {
        try JSONEncoder().encode(JSON.object([
            "registrationData": payload,
            "signedRegistrationData": ["header": .string(jws.header), "payload": .string(jws.payload), "signature": .string(jws.signature)],
        ]))
    }

    /// `WL.JWT`: a client assertion with ms times, `aud` and `jti` as given.
    static func assertionClaims(clientID: String, app: String = "com.sample.web", aud: String?, jti: String?, offset: Int64 = 0) -> JSON {
        let now = Int64(Date().timeIntervalSince1970 * 1000) + offset
        return ["iss": .string("\(app)$web"), "sub": .string(clientID), "aud": JSON(aud), "iat": .int(now), "exp": .int(now + 60_000),
                "jti": JSON(jti), "nbf": .null]
    }
}

/// A raw RSA key of any size, for legacy-key tests (swift-crypto refuses keys under 1024/2048 bits): RS256 by
/// hand, `s = EM^d mod n`.
struct RawRSAKey {
    let n: BigUInt
    let d: BigUInt

    /// A fixed 512-bit test key (generated with `openssl genrsa 512`; used nowhere else).
    static let legacy512 = RawRSAKey(
        n: BigUInt("a42732f6f7ac85e992e39cef1ad40e9159b479c61832d65fb603c30d363f63b3e1dead4d304fe7e1bb625411ca107c80cb098bfaca22642a6cd06fde83fbe229", radix: 16)!,
        d: BigUInt("4d9ca30215b422547f38d2d8522cf4fe50157e85e4a714a8881c5b3a81ed92ab963c2a5601d392f0f7ee36ab7684930abd8c656dcf0d10422516b5591605bc49", radix: 16)!)

    var jwk: JSONObject {
        ["kty": "RSA", "n": .string(Base64URL.encode(n.serialize())), "e": "AQAB"]
    }

    func sign(_ message: Data) -> Data {
        let k = (n.bitWidth + 7) / 8
        let t: [UInt8] = [0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20]
            + [UInt8](SHA256.hash(data: message))
        let em: [UInt8] = [0x00, 0x01] + [UInt8](repeating: 0xff, count: k - t.count - 3) + [0x00] + t
        let s = BigUInt(Data(em)).power(d, modulus: n).serialize()
        return Data([UInt8](repeating: 0, count: k - s.count) + [UInt8](s))
    }
}
