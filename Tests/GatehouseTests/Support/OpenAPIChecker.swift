import Foundation
import GatehouseProtocol

/// Checks real answers against the OpenAPI document: documented path, method and status, required headers,
/// media type, and the body against the schema (the subset of JSON Schema the document uses).
struct OpenAPIChecker {
    let document: JSON

    /// Problems with one exchange; empty when it conforms.
    func problems(method: String, path: String, response: TestResponse) -> [String] {
        guard let (template, item) = pathItem(for: path) else { return ["\(path): not documented"] }
        guard let operation = item[method.lowercased()] else { return ["\(method) \(template): not documented"] }
        guard let documented = operation["responses"]?[String(response.status)] else {
            return ["\(method) \(template): status \(response.status) not documented"]
        }
        let spec = resolve(documented)
        var problems: [String] = []
        for (name, header) in spec["headers"]?.objectValue ?? [:] where resolve(header)["required"] == true {
            if response.header(name) == nil { problems.append("\(method) \(template) \(response.status): header \(name) missing") }
        }
        if let content = spec["content"]?.objectValue {
            let mediaType = response.header("Content-Type")?.split(separator: ";").first.map(String.init) ?? ""
            guard let media = content[mediaType] else {
                return problems + ["\(method) \(template) \(response.status): media type '\(mediaType)' not documented"]
            }
            if mediaType == "application/json", let schema = media["schema"] {
                guard let body = response.json else { return problems + ["\(method) \(template): body is not JSON"] }
                problems += validate(body, against: schema, at: "\(method) \(template) \(response.status) body")
            }
        }
        return problems
    }

    private func pathItem(for path: String) -> (String, JSON)? {
        let segments = path.split(separator: "?").first.map { $0.split(separator: "/") } ?? []
        for (template, item) in document["paths"]?.objectValue ?? [:] {
            let parts = template.split(separator: "/")
            guard parts.count == segments.count else { continue }
            if zip(parts, segments).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) { return (template, item) }
        }
        return nil
    }

    private func resolve(_ value: JSON) -> JSON {
        guard let reference = value["$ref"]?.stringValue, reference.hasPrefix("#/") else { return value }
        var current: JSON? = document
        for key in reference.dropFirst(2).split(separator: "/") { current = current?[String(key)] }
        return current.map(resolve) ?? .null
    }

    func validate(_ value: JSON, against rawSchema: JSON, at location: String) -> [String] {
        let schema = resolve(rawSchema)
        var problems: [String] = []
        if let expected = schema["const"], expected != value { problems.append("\(location): expected \(expected)") }
        if let options = schema["enum"]?.arrayValue, !options.contains(value) { problems.append("\(location): not one of \(options)") }
        if let type = schema["type"] {
            let allowed = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            if !allowed.contains(where: { Self.matches(value, $0) }) { problems.append("\(location): not of type \(allowed)") }
        }
        if let object = value.objectValue {
            for key in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[key] == nil {
                problems.append("\(location): missing '\(key)'")
            }
            let properties = schema["properties"]?.objectValue ?? [:]
            for (key, member) in object {
                if let property = properties[key] {
                    problems += validate(member, against: property, at: "\(location).\(key)")
                } else if let additional = schema["additionalProperties"], additional.objectValue != nil {
                    problems += validate(member, against: additional, at: "\(location).\(key)")
                }
            }
        }
        if let array = value.arrayValue, let items = schema["items"] {
            for (index, element) in array.enumerated() { problems += validate(element, against: items, at: "\(location)[\(index)]") }
        }
        return problems
    }

    private static func matches(_ value: JSON, _ type: String) -> Bool {
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("null", .null), ("object", .object), ("array", .array), ("integer", .int): true
        case ("number", .int), ("number", .double): true
        default: false
        }
    }
}
