import Foundation
import GatehouseProtocol
import NIOSSL
public import PostgresNIO

/// Where a PostgreSQL database is: `postgres://user:password@host:port/database?option=value&...`
/// (`postgresql://` too; user, password and database percent-decoded).
///
/// Defaults: user `postgres`, port 5432, database = user. Options: `sslmode` (`disable`, `prefer`, `require`,
/// `verify-full`; the default is `prefer` on a loopback host and `require` on any other, so that passwords and
/// tokens never cross a network in clear by omission), `pool_size` (this node's connections, 10 by default, opened at
/// start and kept), `connect_timeout` (seconds, 10 by default) and `idle_ping` (seconds between checks of an idle
/// connection with a query; 0, the default, for none).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode = .prefer
    public var poolSize: Int = 10
    public var connectTimeout: Duration = .seconds(10)
    /// How often an idle connection is checked with a query; `nil` (the default): never. Turn it on where something
    /// between the nodes and PostgreSQL (a NAT, a firewall) silently drops idle connections.
    public var idlePing: Duration?

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    public init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw PostgresStoreError.invalidURL("not a URL")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresStoreError.invalidURL("the scheme must be postgres:// or postgresql://, not \(scheme)://")
        }
        guard var host = components.host, !host.isEmpty else { throw PostgresStoreError.invalidURL("no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let username = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw PostgresStoreError.invalidURL("the path must be one database name") }
        self.init(host: host, port: components.port ?? 5432, username: username, password: components.password,
                  database: path.isEmpty ? username : path)
        tls = LoopbackHost.contains(host) ? .prefer : .require
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": tls = .disable
                case "allow", "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default: throw PostgresStoreError.invalidURL("sslmode must be disable, prefer or require")
                }
            case "pool_size":
                guard let size = Int(value), (1...1000).contains(size) else { throw PostgresStoreError.invalidURL("pool_size must be 1...1000") }
                poolSize = size
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else { throw PostgresStoreError.invalidURL("connect_timeout must be seconds > 0") }
                connectTimeout = .seconds(seconds)
            case "idle_ping":
                guard let seconds = Int(value), (0...86_400).contains(seconds) else { throw PostgresStoreError.invalidURL("idle_ping must be seconds 0...86400") }
                idlePing = seconds == 0 ? nil : .seconds(seconds)
            default:
                throw PostgresStoreError.invalidURL("unknown option '\(item.name)' (known: sslmode, pool_size, connect_timeout, idle_ping)")
            }
        }
    }

    /// The URL without the password.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(username)@\(hostPart):\(port)/\(database)"
    }

    /// The same server and credentials, another database.
    public func with(database: String) -> PostgresLocation {
        var copy = self
        copy.database = database
        return copy
    }

    /// The configuration of a single ``PostgresConnection`` to this location.
    public var connectionConfiguration: PostgresConnection.Configuration {
        get throws {
            let tlsConfiguration: PostgresConnection.Configuration.TLS = switch tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: tlsConfiguration)
            configuration.options.connectTimeout = .nanoseconds(connectTimeout.wholeNanoseconds)
            return configuration
        }
    }

    /// The configuration of a ``PostgresClient`` for this location.
    public var clientConfiguration: PostgresClient.Configuration {
        let tlsConfiguration: PostgresClient.Configuration.TLS = switch tls {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tlsConfiguration)
        configuration.options.maximumConnections = poolSize
        // No minimum: PostgresNIO 1.33's pool crashes the process (`precondition(minimumConcurrentConnections <=
        // stats.active)` in `createNewDemandConnectionIfPossible`) when two requests wait while fewer connections
        // than the minimum exist — which is every PostgreSQL restart: while reconnecting fails it destroys the other
        // connections instead of retrying them, and never refills them afterwards (issue 33's drill: 3 nodes of 12
        // restarts died). The price: a connection going back to the pool schedules its idle timer.
        configuration.options.minimumConnections = 0
        configuration.options.keepAliveBehavior = idlePing.map { .init(frequency: $0) }
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }
}
