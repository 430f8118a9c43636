package import GatehouseProtocol

extension PublicKeyPin {
    /// The pins a pinned transport takes (`URLSessionTransport(pins:)`, `PinnedHTTPTransport`): each text `sha256/` and
    /// the base64 of a SubjectPublicKeyInfo's SHA-256.
    /// - Throws: `invalidArgument` for a malformed pin, or none at all.
    package static func transportPins(_ texts: [String]) throws(GatehouseClientError) -> Set<PublicKeyPin> {
        var parsed = Set<PublicKeyPin>()
        for text in texts {
            guard let pin = PublicKeyPin(text) else {
                throw .invalidArgument("'\(text.prefix(80))' is not a public key pin (sha256/ and the base64 of 32 bytes)")
            }
            parsed.insert(pin)
        }
        guard !parsed.isEmpty else { throw .invalidArgument("a pinned transport needs at least one pin") }
        return parsed
    }
}
