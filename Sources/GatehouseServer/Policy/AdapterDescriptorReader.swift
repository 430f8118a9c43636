import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `<securityCheckDefinition>` elements of an `adapter.xml`.
enum AdapterDescriptorReader {
    struct Property: Sendable { let name: String; let defaultValue: String; let type: String? }
    struct Definition: Sendable { let name: String; let className: String; var properties: [Property] }

    static func read(_ data: Data, file: String) throws -> [Definition] {
        let delegate = Delegate()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        guard parser.parse(), delegate.failure == nil else {
            throw MobileFirstImport.Failure(description: "\(file): \(delegate.failure ?? parser.parserError.map { "not well-formed XML (\($0.localizedDescription))" } ?? "not well-formed XML")")
        }
        guard delegate.sawAdapter else { throw MobileFirstImport.Failure(description: "\(file): not an adapter descriptor (no <adapter> element)") }
        return delegate.definitions
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var definitions: [Definition] = []
        var failure: String?
        var sawAdapter = false
        private var current: Definition?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let local = elementName.split(separator: ":").last.map(String.init) ?? elementName
            switch local {
            case "adapter":
                sawAdapter = true
            case "securityCheckDefinition":
                guard let name = attributes["name"], !name.isEmpty, let className = attributes["class"], !className.isEmpty else {
                    failure = "a securityCheckDefinition without name or class"
                    parser.abortParsing()
                    return
                }
                current = Definition(name: name, className: className, properties: [])
            case "property" where current != nil:
                guard let name = attributes["name"], !name.isEmpty else {
                    failure = "a property of \(current?.name ?? "?") without a name"
                    parser.abortParsing()
                    return
                }
                current?.properties.append(Property(name: name, defaultValue: attributes["defaultValue"] ?? "", type: attributes["type"]))
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            let local = elementName.split(separator: ":").last.map(String.init) ?? elementName
            if local == "securityCheckDefinition", let definition = current {
                definitions.append(definition)
                current = nil
            }
        }
    }
}
