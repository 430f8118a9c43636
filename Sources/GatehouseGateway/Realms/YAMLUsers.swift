import Foundation
import GatehouseHTTP
import Yams

/// A users file: a YAML list of `{ username, passwordHash, roles }` (hashes from `gatehouse hash-password`).
enum YAMLUsers {
    static func load(path: String) throws -> [GatewayUser] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try GatewayConfigurationError.decode([GatewayUser].self, yaml: text, keys: .list(GatewayUser.yamlKeys), keyOf: "a user",
                                                    whole: "the users", file: path)
    }
}
