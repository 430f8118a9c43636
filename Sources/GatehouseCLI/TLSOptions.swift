import ArgumentParser

/// `--tls-certificate` and `--tls-key`, shared by `serve` and `gateway`.
struct TLSOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A TLS certificate chain (PEM, leaf first): with --tls-key, serve HTTPS (and wss). Read again on SIGHUP.",
                               valueName: "file"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The TLS private key (PEM).", valueName: "file"))
    var tlsKey: String?

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-certificate and --tls-key go together") }
    }

    /// Both files, when given.
    var files: (certificate: String, key: String)? {
        guard let tlsCertificate, let tlsKey else { return nil }
        return (tlsCertificate, tlsKey)
    }
}
