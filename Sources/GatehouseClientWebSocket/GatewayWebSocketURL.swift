import Foundation
import GatehouseClient

/// A `ws`/`wss` URL taken apart for the connection: where to connect, whether with TLS, and the request target.
struct GatewayWebSocketURL: Sendable, Equatable {
    var host: String
    var port: Int
    var secure: Bool
    /// The path and query, as the request line carries them (`/` when the URL has no path).
    var target: String

    /// `url` taken apart; `http`/`https` are accepted too (the same host and target, for the `OPTIONS` check).
    init(_ url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty,
              ["ws", "wss", "http", "https"].contains(scheme) else {
            throw GatewayClientError.transport("\(url) is not a WebSocket URL")
        }
        secure = scheme == "wss" || scheme == "https"
        // URLComponents keeps an IPv6 literal's brackets on some platforms and not on others.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? (secure ? 443 : 80)
        target = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// The `Host` field's value: the port only when it is not the scheme's.
    var hostField: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Whether the host is an IP address literal (never sent in SNI).
    var hostIsAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }
}
