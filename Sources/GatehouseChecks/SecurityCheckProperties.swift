import Foundation
public import GatehouseProtocol

/// The configuration properties of a check, read into typed values with defaults, collecting errors and warnings.
///
/// A check's configuration reads every property it knows; whatever is left unread is reported as a warning.
/// Errors stop the server from starting (MobileFirst Developer Center, “Creating a security check”: configuration).
public struct SecurityCheckProperties: Sendable {
    private let values: [String: JSON]
    private var read: Set<String> = []
    /// Problems that make the configuration unusable, by property name.
    public private(set) var errors: [String: String] = [:]
    /// Problems the check can live with, by property name.
    public private(set) var warnings: [String: String] = [:]

    public init(_ values: [String: JSON]) {
        self.values = values
    }

    /// An integer property; numbers given as strings (`"3"`) are accepted, as in MobileFirst descriptors.
    public mutating func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int> = 0...Int(Int32.max)) -> Int {
        read.insert(name)
        guard let raw = values[name], raw != .null else { return defaultValue }
        let value = raw.intValue ?? raw.stringValue.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard let value else {
            errors[name] = "must be an integer"
            return defaultValue
        }
        guard range.contains(value) else {
            errors[name] = "must be between \(range.lowerBound) and \(range.upperBound), not \(value)"
            return defaultValue
        }
        return value
    }

    /// A string property.
    public mutating func string(_ name: String, default defaultValue: String) -> String {
        read.insert(name)
        guard let raw = values[name], raw != .null else { return defaultValue }
        switch raw {
        case .string(let s): return s
        case .int(let i): return String(i)
        default:
            errors[name] = "must be a string"
            return defaultValue
        }
    }

    /// A boolean property; `"true"`/`"false"` strings are accepted.
    public mutating func bool(_ name: String, default defaultValue: Bool) -> Bool {
        read.insert(name)
        guard let raw = values[name], raw != .null else { return defaultValue }
        if let b = raw.boolValue { return b }
        switch raw.stringValue?.lowercased() {
        case "true": return true
        case "false": return false
        default:
            errors[name] = "must be true or false"
            return defaultValue
        }
    }

    /// A list of strings; a single string is read as a list of its comma-separated items (as MobileFirst
    /// descriptors write lists).
    public mutating func strings(_ name: String, default defaultValue: [String]) -> [String] {
        read.insert(name)
        guard let raw = values[name], raw != .null else { return defaultValue }
        switch raw {
        case .string(let text):
            return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .array(let items):
            let texts = items.compactMap(\.stringValue)
            guard texts.count == items.count else {
                errors[name] = "must be a list of strings"
                return defaultValue
            }
            return texts
        default:
            errors[name] = "must be a list of strings"
            return defaultValue
        }
    }

    /// Records an error on `property`.
    public mutating func error(_ property: String, _ message: String) { errors[property] = message }

    /// Records a warning on `property`.
    public mutating func warning(_ property: String, _ message: String) { warnings[property] = message }

    /// Adds a warning for every property that no one read.
    public mutating func warnAboutUnknownProperties() {
        for name in values.keys where !read.contains(name) {
            warnings[name] = "unknown property, ignored"
        }
    }
}
