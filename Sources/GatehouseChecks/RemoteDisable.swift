import Crypto
import Foundation
public import GatehouseProtocol

/// MobileFirst's application management — “Remotely disabling application access to protected resources” and
/// “Displaying an administrator message” — as the security check MobileFirst builds it on: `wl_remoteDisableRealm`.
///
/// An application's policy lists rules by version (``Rule``); the first rule matching the registered version decides:
/// - *active* (or no rule): the check is not part of the client's rounds at all (``applies(to:)``);
/// - *notify*: a challenge `{"message","messageId","messageType":"NOTIFY"}` until the client answers with the
///   message's id (`{"messageId"}`), then a success, and no challenge again for that message (a new message has a new
///   id, and is shown again);
/// - *disabled*: a failure `{"message","downloadLink"}` (the link when the rule has one): no token, for any scope,
///   until the app is upgraded to a version no disabling rule matches, or the rule changes.
///
/// The message is chosen by the request's `Accept-Language` from the rule's `messages` by locale (`de`, `pt-BR`),
/// else its default `message`. The MobileFirst SDKs' built-in handler of this name shows the dialogs (apps may
/// register their own handler for `wl_remoteDisableRealm` to show them their way).
public struct RemoteDisable: SecurityCheck {
    /// The check's name, as MobileFirst clients' built-in handler knows it.
    public static let checkName = RemoteDisableWire.checkName
    public var name: String { Self.checkName }
    /// The rules, first match wins.
    public let rules: [Rule]

    public init(rules: [Rule]) { self.rules = rules }

    /// An application version's status.
    public enum Status: String, Sendable, CaseIterable, Codable {
        /// Served as usual.
        case active
        /// Served, after the user saw the message once.
        case notify
        /// No token until upgraded.
        case disabled
    }

    /// The status of the versions one rule matches.
    public struct Rule: Sendable, Equatable {
        public var versions: VersionRange
        public var status: Status
        /// The message shown by default.
        public var message: String
        /// The message by locale (`de`, `pt-br`: lower-cased).
        public var messages: [String: String]
        /// Where the new version is (a disabled app's "upgrade" button).
        public var downloadLink: String?

        public init(versions: VersionRange, status: Status, message: String, messages: [String: String] = [:], downloadLink: String? = nil) {
            self.versions = versions
            self.status = status
            self.message = message
            self.messages = Dictionary(messages.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
            self.downloadLink = downloadLink
        }

        /// The message for a request whose `Accept-Language` is `acceptLanguage`: the first of its languages (by
        /// quality) the rule has, exactly or by its primary tag; else the default.
        public func message(acceptLanguage: String?) -> String {
            for tag in Self.languages(acceptLanguage) {
                if let text = messages[tag] { return text }
                if let primary = tag.split(separator: "-").first, let text = messages[String(primary)] { return text }
            }
            return message
        }

        /// The message's id, derived from the rule's status and texts: a client shows a NOTIFY message once per id,
        /// so a changed text is shown again.
        public var messageID: String {
            let text = ([status.rawValue, message] + messages.keys.sorted().flatMap { [$0, messages[$0]!] }).joined(separator: "\u{1F}")
            return Base64URL.encode(Array(SHA256.hash(data: Array(text.utf8)).prefix(12)))
        }

        /// The language tags of an `Accept-Language` value, best first (quality 0 left out), lower-cased.
        static func languages(_ header: String?) -> [String] {
            guard let header else { return [] }
            var tags: [(tag: String, quality: Double, index: Int)] = []
            for (index, part) in header.split(separator: ",").prefix(32).enumerated() {
                let pieces = part.split(separator: ";")
                guard let tag = pieces.first?.trimmingCharacters(in: .whitespaces).lowercased(), !tag.isEmpty, tag != "*" else { continue }
                var quality = 1.0
                for parameter in pieces.dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    if pair.count == 2, pair[0] == "q", let value = Double(pair[1]) { quality = value }
                }
                if quality > 0 { tags.append((tag, quality, index)) }
            }
            return tags.sorted { $0.quality != $1.quality ? $0.quality > $1.quality : $0.index < $1.index }.map(\.tag)
        }
    }

    /// The per-client state: the id of the NOTIFY message the client acknowledged.
    public struct State: Codable, Sendable, Equatable {
        public var acknowledged: String?
        public init(acknowledged: String? = nil) { self.acknowledged = acknowledged }
    }

    public func makeState() -> State { State() }

    /// The rule in force for `version` (the registered application version; web apps register none).
    public func rule(for version: String?) -> Rule? {
        rules.first { $0.versions.contains(version) }
    }

    /// Whether the check takes part in the rounds of a client of `version`: only when its rule notifies or disables.
    public func applies(to version: String?) -> Bool {
        guard let rule = rule(for: version) else { return false }
        return rule.status != .active
    }

    /// How long a success holds: as long as the token the client may get (the rule is read again at every round).
    static let successLifetime: Int64 = 365 * 86_400_000

    public func authorize(scope: Set<String>, credentials: JSONObject?, request: CheckRequest, state: inout State, client: inout ClientContext,
                          response: inout AuthorizationResponse) async throws {
        guard let rule = rule(for: client.application.version), rule.status != .active else {
            response.addSuccess(scope: scope, expiresAt: client.now + Self.successLifetime, checkName: name)
            return
        }
        let message = rule.message(acceptLanguage: request.headers["accept-language"])
        switch rule.status {
        case .disabled:
            var failure: JSONObject = [RemoteDisableWire.message: .string(message)]
            if let link = rule.downloadLink { failure[RemoteDisableWire.downloadLink] = .string(link) }
            response.addFailure(checkName: name, failure: failure)
        case .notify, .active:
            let id = rule.messageID
            if let answered = credentials?[RemoteDisableWire.messageID]?.stringValue, answered == id { state.acknowledged = id }
            if state.acknowledged == id {
                response.addSuccess(scope: scope, expiresAt: client.now + Self.successLifetime, checkName: name)
            } else {
                response.addChallenge(checkName: name, challenge: [
                    RemoteDisableWire.message: .string(message), RemoteDisableWire.messageID: .string(id),
                    RemoteDisableWire.messageType: .string(RemoteDisableWire.notify),
                ])
            }
        }
    }

    public func introspect(scope: Set<String>, state: inout State, client: inout ClientContext, response: inout IntrospectionResponse) async throws {
        let rule = rule(for: client.application.version)
        switch rule?.status {
        case .disabled?:
            return
        case .notify?:
            guard let rule, state.acknowledged == rule.messageID else { return }
        case .active?, nil:
            break
        }
        response.addIntrospectionData(checkName: name, scope: scope, expiresAt: client.now + Self.successLifetime, customData: nil)
    }

    /// Never expires by itself: the rule decides at every round.
    public func expiresAt(state: State) -> Int64 { Int64.max }
}

/// The application versions a ``RemoteDisable/Rule`` matches: `*` (every version, and none: web apps register
/// without one), one version (`2.1`), or a comparison (`< 2.0`, `<= 1.4.2`, `>= 3`, `> 1`), compared part by part as
/// numbers (`1.10` is above `1.9`; a missing part is 0) — a version that is not dotted numbers matches exactly only.
public struct VersionRange: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Equatable { case any, exactly(String), below(String, orEqual: Bool), above(String, orEqual: Bool) }
    let kind: Kind

    /// Reads a range; `nil` when it is none of the shapes above.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func operand(_ prefix: String) -> String? {
            let rest = trimmed.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
            return Self.numbers(rest) == nil ? nil : rest
        }
        if trimmed == "*" || trimmed.isEmpty {
            kind = .any
        } else if trimmed.hasPrefix("<=") {
            guard let value = operand("<=") else { return nil }
            kind = .below(value, orEqual: true)
        } else if trimmed.hasPrefix(">=") {
            guard let value = operand(">=") else { return nil }
            kind = .above(value, orEqual: true)
        } else if trimmed.hasPrefix("<") {
            guard let value = operand("<") else { return nil }
            kind = .below(value, orEqual: false)
        } else if trimmed.hasPrefix(">") {
            guard let value = operand(">") else { return nil }
            kind = .above(value, orEqual: false)
        } else if trimmed.allSatisfy({ !$0.isWhitespace && !"<>=".contains($0) }) {
            kind = .exactly(trimmed)
        } else {
            return nil
        }
    }

    public var description: String {
        switch kind {
        case .any: "*"
        case .exactly(let version): version
        case .below(let version, let orEqual): (orEqual ? "<= " : "< ") + version
        case .above(let version, let orEqual): (orEqual ? ">= " : "> ") + version
        }
    }

    /// Whether `version` (`nil`: registered without one) is in the range.
    public func contains(_ version: String?) -> Bool {
        switch kind {
        case .any: return true
        case .exactly(let wanted): return version == wanted
        case .below(let bound, let orEqual), .above(let bound, let orEqual):
            guard let version, let order = Self.compare(version, bound) else { return false }
            if order == 0 { return orEqual }
            if case .below = kind { return order < 0 }
            return order > 0
        }
    }

    /// The dotted numbers of `text` (`2.10.1` → [2, 10, 1]); `nil` when it is not such.
    static func numbers(_ text: String) -> [Int]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= 8 else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 9, part.allSatisfy(\.isASCII), let value = Int(part), value >= 0 else { return nil }
            numbers.append(value)
        }
        return numbers
    }

    /// -1, 0 or 1 as `a` is below, equal to or above `b`; `nil` when either is not dotted numbers.
    static func compare(_ a: String, _ b: String) -> Int? {
        guard let x = numbers(a), let y = numbers(b) else { return nil }
        for index in 0..<max(x.count, y.count) {
            let left = index < x.count ? x[index] : 0, right = index < y.count ? y[index] : 0
            if left != right { return left < right ? -1 : 1 }
        }
        return 0
    }
}
