import Synchronization

/// This server's issuer: the `iss` of its tokens and the RFC 8414 `issuer`, always the same. Configured
/// (`--issuer https://auth.example.com`), or `http://<host>:<port>` of the listening address, with the port
/// known once the server listens (port 0 picks one).
public final class IssuerName: Sendable {
    private let value: Mutex<String>
    /// Whether an operator set it (then the bound port does not change it).
    public let isConfigured: Bool
    private let host: String

    init(configured: String?, host: String, port: Int) {
        self.host = host.contains(":") ? "[\(host)]" : host
        if let configured {
            value = Mutex(configured.hasSuffix("/") ? String(configured.dropLast()) : configured)
            isConfigured = true
        } else {
            value = Mutex("http://\(self.host):\(port)")
            isConfigured = false
        }
    }

    /// The issuer now.
    public var current: String { value.withLock { $0 } }

    /// The server listens on `port`: an issuer that was not configured names it.
    func bind(port: Int) {
        guard !isConfigured else { return }
        value.withLock { $0 = "http://\(host):\(port)" }
    }
}
