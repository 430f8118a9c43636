import Foundation
import GatehouseProtocol
import Yams

/// The OpenAPI 3.1 description of every HTTP endpoint (`OpenAPI/openapi.yaml`, a resource of this module), served
/// at `/openapi.json`. A test checks real answers against it; schemathesis generates requests from it.
public enum OpenAPIDocument {
    /// The document could not be read: a binary installed without its resource bundle, or a broken document.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The name of the resource bundle SwiftPM builds next to the binary.
    static let bundleName = "gatehouse_GatehouseServer.resources"

    /// Reads the document: from the resource bundle next to the running binary (an installed `gatehouse` needs
    /// `gatehouse_GatehouseServer.resources` beside it), else from this source tree (a build on this machine).
    public static func load() throws -> JSON {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(bundleName).appendingPathComponent("openapi.yaml"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("OpenAPI/openapi.yaml"),
        ]
        guard let url = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0.path) }) else {
            throw Unavailable(description: "The OpenAPI document is missing: install \(bundleName) (built next to the binary) beside gatehouse; looked in \(candidates.map(\.path))")
        }
        do {
            return try YAMLDecoder().decode(JSON.self, from: String(contentsOf: url, encoding: .utf8))
        } catch {
            throw Unavailable(description: "The OpenAPI document \(url.path) cannot be read: \(error)")
        }
    }
}
