package import Yams

/// The keys a YAML configuration may hold, by place, so that a misspelt key is an error rather than a setting
/// silently left out: the decoders ignore keys they do not know, and a gateway service whose `realm:` is spelt
/// `relm:` would be open, a policy whose `mandatoryScope` is misspelt would protect less.
///
/// Built from the types' `CodingKeys` (``mapping(_:_:)``), so that the keys are listed once.
package indirect enum YAMLKeys: Sendable {
    /// A mapping of these keys, each value as its entry says (`.any` for one not checked further).
    case keys([String: YAMLKeys])
    /// A mapping of names of the user's own (checks, properties, principals), each value as given.
    case entries(YAMLKeys)
    /// A list, each item as given.
    case list(YAMLKeys)
    /// Anything: a scalar, or a value not checked.
    case any

    /// A mapping of a `Codable` type's keys (its `CodingKeys`, made `CaseIterable`), with what the values of some of
    /// them hold.
    package static func mapping<Key: CodingKey & CaseIterable & Hashable>(_ keys: Key.Type, _ values: [Key: YAMLKeys] = [:]) -> YAMLKeys {
        .keys(Dictionary(uniqueKeysWithValues: Key.allCases.map { ($0.stringValue, values[$0] ?? .any) }))
    }

    /// The first key of `yaml` that is not known here, as a path (`services[0].relm`), with the keys known in its
    /// place; `nil` when every key is known, or when the text is no YAML (the decoder reports that).
    package func unknownKey(in yaml: String) -> (path: String, known: [String])? {
        guard let node = try? Yams.compose(yaml: yaml) else { return nil }
        return unknownKey(in: node, at: "")
    }

    /// ``unknownKey(in:)-(String)`` of a document already composed.
    package func unknownKey(in document: Node) -> (path: String, known: [String])? {
        unknownKey(in: document, at: "")
    }

    private func unknownKey(in node: Node, at path: String) -> (path: String, known: [String])? {
        switch (self, node) {
        case (.keys, .mapping(let mapping)), (.entries, .mapping(let mapping)):
            for (key, value) in mapping {
                // A merge key (`<<: *base`) brings the keys of its mapping (or mappings) here, as the decoder reads it.
                if key.tag.rawValue == Tag.Name.merge.rawValue {
                    if let found = mergedKey(in: value, at: path) { return found }
                    continue
                }
                let name = key.string ?? "\(key)"
                let place = path.isEmpty ? name : "\(path).\(name)"
                guard let inner = valueKeys(of: name) else { return (place, knownNames) }
                if let found = inner.unknownKey(in: value, at: place) { return found }
            }
        case (.list(let inner), .sequence(let items)):
            for (index, item) in items.enumerated() {
                if let found = inner.unknownKey(in: item, at: "\(path)[\(index)]") { return found }
            }
        default:
            // A scalar, or a value of another shape than expected: the decoder says what is wrong with it.
            break
        }
        return nil
    }

    /// What the value of the key `name` may hold here; `nil` for a key not known.
    private func valueKeys(of name: String) -> YAMLKeys? {
        switch self {
        case .keys(let known): known[name]
        case .entries(let inner): inner
        case .list, .any: nil
        }
    }

    /// The keys known here, for an error.
    private var knownNames: [String] {
        if case .keys(let known) = self { return known.keys.sorted() }
        return []
    }

    /// The keys a merge key brings (its mapping, or each mapping of its list) checked as this place's own.
    private func mergedKey(in value: Node, at path: String) -> (path: String, known: [String])? {
        switch value {
        case .mapping:
            return unknownKey(in: value, at: path)
        case .sequence(let items):
            for item in items {
                if let found = unknownKey(in: item, at: path) { return found }
            }
            return nil
        default:
            return nil
        }
    }
}

extension DecodingError {
    /// Where a configuration file went wrong (`services[0].port`; empty for the whole text) and what is wrong there, in
    /// words for its author rather than the decoder's dump.
    package var placeAndProblem: (place: String, problem: String) {
        func place(_ path: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (path + (last.map { [$0] } ?? [])).reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
            }
        }
        func describe(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: "a string"
            case is Int.Type: "an integer"
            case is Double.Type: "a number"
            case is Bool.Type: "true or false"
            case is Array<Any>.Type: "a list"
            default: "a \(String(describing: type).replacingOccurrences(of: "Dictionary<String, ", with: "mapping of "))"
            }
        }
        switch self {
        case .keyNotFound(let missing, let context):
            return (place(context.codingPath, missing), "is required")
        case .typeMismatch(let type, let context):
            return (place(context.codingPath), "must be \(describe(type))")
        case .valueNotFound(let type, let context):
            return (place(context.codingPath), "must be \(describe(type)), not empty")
        case .dataCorrupted(let context):
            // Yams' own error says where (line and column) the text stops being YAML.
            if context.codingPath.isEmpty, let underlying = context.underlyingError {
                return ("", "is not valid YAML: \(underlying)")
            }
            return (place(context.codingPath), context.debugDescription)
        @unknown default:
            return ("", "\(self)")
        }
    }
}

extension DecodingError {
    /// ``placeAndProblem`` as one sentence: `'services[0].port' must be an integer`, or `<whole> <problem>` for an
    /// error of the whole text (`the configuration is not valid YAML: ...`).
    package func sentence(whole: String) -> String {
        let (place, problem) = placeAndProblem
        return place.isEmpty ? "\(whole) \(problem)" : "'\(place)' \(problem)"
    }
}
