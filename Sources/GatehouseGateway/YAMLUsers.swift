import Foundation
import Yams

/// A users file: a YAML list of `{ username, passwordHash, roles }` (hashes from `gatehouse hash-password`).
enum YAMLUsers {
    static func load(path: String) throws -> [GatewayUser] {
        try YAMLDecoder().decode([GatewayUser].self, from: String(contentsOfFile: path, encoding: .utf8))
    }
}
