import Foundation
import GatehouseHTTP
import Yams

/// A users file: a YAML list of `{ username, passwordHash, roles }` (hashes from `gatehouse hash-password`).
enum YAMLUsers {
    static func load(path: String) throws -> [GatewayUser] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        if let unknown = YAMLKeys.list(GatewayUser.yamlKeys).unknownKey(in: text) {
            throw GatewayConfigurationError("\(path): '\(unknown.path)' is not a key of a user (known: \(unknown.known.joined(separator: ", ")))")
        }
        do {
            return try YAMLDecoder().decode([GatewayUser].self, from: text)
        } catch let error as DecodingError {
            let (place, problem) = error.placeAndProblem
            throw GatewayConfigurationError("\(path): " + (place.isEmpty ? "the users \(problem)" : "'\(place)' \(problem)"))
        }
    }
}
