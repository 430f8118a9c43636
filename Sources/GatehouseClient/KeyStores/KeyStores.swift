import Foundation

/// The key store a ``GatehouseClient`` uses when it is given none.
public enum KeyStores {
    /// A persistent store for the application and server of `configuration`, so that the client keeps its key
    /// pair, client id and device id across launches (server-side attempt counters and remember-me depend on it):
    /// the Keychain on Apple platforms (`KeychainKeyStore`), elsewhere an owner-only file (``FileKeyStore``)
    /// under the user's application-support directory (`~/.local/share/gatehouse` on Linux).
    public static func standard(for configuration: ClientConfiguration) -> any KeyStore {
        let name = storeName(for: configuration)
        #if canImport(Security)
        return KeychainKeyStore(service: "gatehouse.registration", account: name)
        #else
        return FileKeyStore(directory: defaultDirectory, name: name)
        #endif
    }

    /// `<application id>@<server host>[:port]`, with every character but letters, digits, `.`, `-` and `_`
    /// replaced by `_` (it names a file).
    static func storeName(for configuration: ClientConfiguration) -> String {
        let host = configuration.serverURL.host ?? "server"
        let port = configuration.serverURL.port.map { ":\($0)" } ?? ""
        let raw = "\(configuration.applicationID)@\(host)\(port)"
        return String(raw.map { $0.isLetter || $0.isNumber || "._-@".contains($0) ? $0 : "_" })
    }

    /// `<application support>/gatehouse`.
    static var defaultDirectory: URL {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("gatehouse", isDirectory: true)
    }
}
