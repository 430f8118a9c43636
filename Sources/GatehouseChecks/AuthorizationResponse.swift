public import GatehouseProtocol

/// What checks answer in a round: a success, a challenge or a failure per check name (MobileFirst's `AuthorizationResponse`).
public struct AuthorizationResponse: Sendable, Equatable {
    /// The kind of answer, failures before challenges before successes.
    public enum ResponseType: Sendable, Equatable {
        case success, challenge, failure
    }

    /// A check's success: the scope elements it grants, until when, and data for the client.
    public struct Success: Sendable, Equatable {
        public var scope: Set<String>
        /// Epoch milliseconds.
        public var expiresAt: Int64
        public var data: JSONObject
    }

    public private(set) var successes: [String: Success] = [:]
    public private(set) var challenges: [String: JSON] = [:]
    public private(set) var failures: [String: JSON] = [:]

    public init() {}

    /// Grants `scope` until `expiresAt` (epoch ms) for `checkName`, with optional data (e.g. `"user"`).
    public mutating func addSuccess(scope: Set<String>, expiresAt: Int64, checkName: String, data: JSONObject = [:]) {
        successes[checkName] = Success(scope: scope, expiresAt: expiresAt, data: data)
    }

    /// Asks the client's challenge handler for `checkName` to answer `challenge` (`nil` sends `null`).
    public mutating func addChallenge(checkName: String, challenge: JSONObject?) {
        challenges[checkName] = challenge.map(JSON.object) ?? .null
    }

    /// Refuses the client for `checkName`.
    public mutating func addFailure(checkName: String, failure: JSONObject?) {
        failures[checkName] = failure.map(JSON.object) ?? .null
    }

    /// The overall kind, or `nil` when nothing was added.
    public var type: ResponseType? {
        if !failures.isEmpty { return .failure }
        if !challenges.isEmpty { return .challenge }
        if !successes.isEmpty { return .success }
        return nil
    }

    /// Adds everything `other` holds.
    public mutating func merge(_ other: AuthorizationResponse) {
        successes.merge(other.successes) { _, new in new }
        challenges.merge(other.challenges) { _, new in new }
        failures.merge(other.failures) { _, new in new }
    }
}

/// What checks answer to introspection: the checks whose state still grants the scope.
public struct IntrospectionResponse: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var scope: Set<String>
        /// Epoch milliseconds.
        public var expiresAt: Int64
        public var customData: JSONObject?
    }

    public private(set) var entries: [String: Entry] = [:]

    public init() {}

    public mutating func addIntrospectionData(checkName: String, scope: Set<String>, expiresAt: Int64, customData: JSONObject?) {
        entries[checkName] = Entry(scope: scope, expiresAt: expiresAt, customData: customData)
    }
}
