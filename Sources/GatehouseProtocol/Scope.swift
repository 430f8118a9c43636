/// A scope: a set of space-separated scope elements, such as `"RegisteredClient accessRestricted"`.
///
/// Two scopes are equal when they hold the same elements, whatever their order, and with or without the
/// reserved element `RegisteredClient`, which every scope implies (MobileFirst's `WLAuthorizationManager`).
public struct Scope: Sendable, Hashable, CustomStringConvertible {
    /// The reserved scope element that every registered client is granted.
    public static let registeredClient = "RegisteredClient"

    /// The elements, always including ``registeredClient``.
    public let elements: Set<String>

    /// Parses a space-separated scope string; `nil` or blank means `RegisteredClient` alone.
    public init(_ string: String?) {
        let string = string ?? ""
        // ASCII without CR (every scope a client sends that is valid): split over UTF-8 bytes, as a token's scope is
        // parsed on every use of the token. Otherwise over Characters, where `\r\n` and a blank with a combining
        // mark are characters of their own, not separators.
        if !string.utf8.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\r") }) {
            let parts = string.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") })
            self.init(elements: parts.map { String(Substring($0)) })
            return
        }
        let parts = string.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        self.init(elements: parts)
    }

    /// A scope of the given elements (``registeredClient`` is added).
    public init(elements: some Sequence<String>) {
        var set = Set(elements.filter { !$0.isEmpty })
        set.insert(Scope.registeredClient)
        self.elements = set
    }

    /// The elements other than ``registeredClient``.
    public var customElements: Set<String> { elements.subtracting([Scope.registeredClient]) }

    /// The normalised form: sorted elements joined by single spaces (the SDK's cache key).
    public var normalized: String { elements.sorted().joined(separator: " ") }

    public var description: String { normalized }

    /// Whether every element of `other` is in this scope.
    public func contains(_ other: Scope) -> Bool { other.elements.isSubset(of: elements) }
}
