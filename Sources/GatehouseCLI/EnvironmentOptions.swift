public import ArgumentParser
import Logging

/// Every option of `serve`, `gateway` and `keys` can come from the environment (12-factor): `GATEHOUSE_<OPTION>`,
/// the option's name in capitals with `_` for `-` (`--tls-certificate` ← `GATEHOUSE_TLS_CERTIFICATE`). A flag
/// given on the command line wins over the environment.
enum EnvironmentOptions {
    /// The options each command reads from the environment.
    static let options: [String: [String]] = [
        "serve": ["policy", "data", "database", "host", "port", "issuer", "tls-certificate", "tls-key", "tls-client-ca", "idle-timeout", "header-read-timeout",
                  "retire-signing-keys-after-days", "node-name", "audit-retention-days", "audit-log-lines", "connections-on-event-loop", "event-loops", "policy-poll-interval", "sample-adapter", "sqlite-durability",
                  "store-timeout", "database-wait", "trusted-proxy", "forwarded-header", "metrics-access", "otlp-endpoint", "trace-sample-ratio", "log-level"],
        "gateway": ["config", "host", "port", "event-loops", "tls-certificate", "tls-key", "upstream-ca-file", "otlp-endpoint", "trace-sample-ratio", "log-level"],
        "keys": ["data", "database"],
    ]

    /// The environment variable of `option`.
    static func variable(_ option: String) -> String {
        "GATEHOUSE_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// `arguments` (without the program name) with the options set in `environment` and not on the command line
    /// appended, for the command the arguments name (`serve` when they name none).
    static func apply(to arguments: [String], environment: [String: String]) -> [String] {
        let explicit = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 }
        guard let names = options[explicit ?? "serve"] else { return arguments }
        var added: [String] = []
        for name in names {
            guard let value = environment[variable(name)], !value.isEmpty else { continue }
            let flag = "--" + name
            if arguments.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) { continue }
            added += [flag, value]
        }
        guard !added.isEmpty else { return arguments }
        if explicit == nil, arguments.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "--version" }) { return arguments }
        return (explicit == nil ? ["serve"] : []) + arguments + added
    }
}

/// `--log-level` takes swift-log's level names, and refuses any other (it was read as `info` silently).
extension Logger.Level: @retroactive ExpressibleByArgument {}
