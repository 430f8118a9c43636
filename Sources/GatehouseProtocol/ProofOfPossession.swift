public import Foundation

/// A proof that a request comes from the holder of a client's registered key, in the shape of RFC 9449's DPoP
/// proof: a JWS of type `dpop+jwt` signed RS256 by the client's key (its public key in the header, as every
/// MobileFirst JWS carries it), sent in the request's `DPoP` field. The server verifies it against the key the
/// client *registered* (never the header's), so knowing a client id is not enough to act for the client.
///
/// Gatehouse asks for it on pre-authorization rounds of applications whose policy says
/// `requireProofOfPossession: true`: without it, anyone who learnt a client id (it is in every token) could answer
/// that client's challenges — log it in as another user, or burn its PIN attempts.
public enum ProofOfPossession {
    /// The request field that carries the proof.
    public static let field = "DPoP"
    /// The JWS `typ` of a proof.
    public static let type = "dpop+jwt"
    /// How far a proof's `iat` may be from the server's clock, seconds (each way).
    public static let window: Int64 = 60

    /// The claims of a proof (RFC 9449 §4.2).
    public struct Claims: Codable, Sendable, Equatable {
        /// Unique per proof: a proof is accepted once.
        public var jti: String
        /// The request's method.
        public var htm: String
        /// The request's URL, without query or fragment.
        public var htu: String
        /// When it was made, seconds since 1970 (the server's clock as the client knows it).
        public var iat: Int64

        public init(jti: String, htm: String, htu: String, iat: Int64) {
            self.jti = jti
            self.htm = htm
            self.htu = htu
            self.iat = iat
        }
    }

    /// A proof for `method` on `url`, made at `now` (seconds), signed by `key` (the client's; `kid` its client id).
    public static func proof(method: String, url: String, key: ClientKeyPair, kid: String?, now: Int64, jti: String = UUID().uuidString) throws -> String {
        let htu = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return try JWS.sign(Claims(jti: jti, htm: method, htu: htu, iat: now), with: key, kid: kid, typ: type).compact
    }
}
