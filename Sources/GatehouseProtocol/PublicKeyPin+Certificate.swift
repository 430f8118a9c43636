extension PublicKeyPin {
    /// The pin of the public key in an X.509 certificate (DER): the SHA-256 of its `subjectPublicKeyInfo`, as
    /// `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256` computes it. `nil` when the
    /// bytes are not a certificate this reading understands (RFC 5280's `Certificate`, DER).
    ///
    /// What the SDK pins on Apple platforms, where `SecTrust` hands over certificates and no SPKI (the NIO transport
    /// reads the key from NIOSSL's certificate instead).
    public init?(certificate der: some Collection<UInt8>) {
        let bytes = Array(der)
        // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
        //                            issuer, validity, subject, subjectPublicKeyInfo, ... }, ... }
        guard let certificate = DERElement(in: bytes, at: 0), certificate.tag == 0x30,
              var field = DERElement(in: bytes, at: certificate.contentStart), field.tag == 0x30 else { return nil }
        let tbsEnd = field.end
        guard var position = Optional(field.contentStart), position < tbsEnd,
              let first = DERElement(in: bytes, at: position) else { return nil }
        field = first
        if field.tag == 0xA0 { position = field.end }   // the explicit version
        // serialNumber, signature, issuer, validity, subject: then the key.
        for expected: UInt8 in [0x02, 0x30, 0x30, 0x30, 0x30] {
            guard let element = DERElement(in: bytes, at: position), element.tag == expected, element.end <= tbsEnd else { return nil }
            position = element.end
        }
        guard let spki = DERElement(in: bytes, at: position), spki.tag == 0x30, spki.end <= tbsEnd else { return nil }
        self.init(spki: bytes[position..<spki.end])
    }
}

/// One DER element's tag and extent (single-byte tags, definite lengths of up to four bytes).
private struct DERElement {
    let tag: UInt8
    let contentStart: Int
    let end: Int

    init?(in bytes: [UInt8], at start: Int) {
        guard start + 2 <= bytes.count else { return nil }
        tag = bytes[start]
        let first = Int(bytes[start + 1])
        var length = first
        var headerLength = 2
        if first >= 0x80 {
            let count = first & 0x7F
            guard (1...4).contains(count), start + 2 + count <= bytes.count else { return nil }
            length = 0
            for byte in bytes[(start + 2)..<(start + 2 + count)] { length = length << 8 | Int(byte) }
            headerLength += count
        }
        contentStart = start + headerLength
        end = contentStart + length
        guard end <= bytes.count else { return nil }
    }
}
