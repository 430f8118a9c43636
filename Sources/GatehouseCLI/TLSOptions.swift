import ArgumentParser

/// `--tls-certificate` and `--tls-key`, shared by `serve` and `gateway`.
struct TLSOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A TLS certificate chain (PEM, leaf first): with --tls-key, serve HTTPS (and wss). Read again on SIGHUP.",
                               valueName: "file"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The TLS private key (PEM).", valueName: "file"))
    var tlsKey: String?

    @Flag(help: "Ask TLS clients for a certificate (optional; any is accepted at the handshake): for confidential clients that authenticate by certificate and tokens bound to one (RFC 8705). Needs --tls-certificate.")
    var tlsClientCertificates = false

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-certificate and --tls-key go together") }
        if tlsClientCertificates, tlsCertificate == nil {
            throw ValidationError("--tls-client-certificates needs --tls-certificate and --tls-key: client certificates come with TLS")
        }
    }

    /// Both files, when given.
    var files: (certificate: String, key: String)? {
        guard let tlsCertificate, let tlsKey else { return nil }
        return (tlsCertificate, tlsKey)
    }
}
