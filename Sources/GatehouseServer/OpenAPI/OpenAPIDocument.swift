import Foundation
public import GatehouseProtocol
import Yams

/// The OpenAPI 3.1 description of every HTTP endpoint (`OpenAPI/openapi.yaml`, embedded into the binary at build
/// time: SwiftPM's `embedInCode` resources), served at `/openapi.json`. A test checks real answers against it;
/// schemathesis generates requests from it.
public enum OpenAPIDocument {
    /// The document could not be read: a broken document.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads the document, embedded in the binary.
    public static func load() throws -> JSON {
        do {
            return try YAMLDecoder().decode(JSON.self, from: String(decoding: PackageResources.openapi_yaml, as: UTF8.self))
        } catch {
            throw Unavailable(description: "The embedded OpenAPI document cannot be read: \(error)")
        }
    }
}
