package import GatehouseProtocol

/// The state machine every stateful check keeps: a state name, when it was set, and per-state durations
/// (MobileFirst Developer Center, “ExternalizableSecurityCheck”).
public struct ExternalizableState: Codable, Sendable, Equatable {
    /// The predefined state that every other state falls into when its duration has passed.
    public static let expired = "expired"

    /// Durations of the states, in seconds, by state name.
    public typealias Durations = [String: Int]

    /// Why a state cannot be set.
    public struct UnsupportedState: Error, Equatable {
        public let name: String
    }

    public private(set) var stateName: String
    /// Epoch milliseconds.
    public private(set) var stateSetAt: Int64

    public init() {
        stateName = Self.expired
        stateSetAt = 0
    }

    /// When the current state expires (epoch ms); 0 for `expired` or a state without a duration.
    public func expiresAt(durations: Durations) -> Int64 {
        guard stateName != Self.expired, let seconds = durations[stateName] else { return 0 }
        return stateSetAt + Int64(seconds) * 1000
    }

    /// The current state name: a state whose time is up has become `expired`.
    public mutating func state(durations: Durations, now: Int64) -> String {
        if stateName != Self.expired, now >= expiresAt(durations: durations) {
            stateName = Self.expired
        }
        return stateName
    }

    /// Moves to `name`. Setting the live state again keeps its timer; an expired one starts anew.
    public mutating func setState(_ name: String, durations: Durations, now: Int64) throws(UnsupportedState) {
        guard name == Self.expired || durations[name] != nil else { throw UnsupportedState(name: name) }
        if stateName != name || now >= expiresAt(durations: durations) {
            stateName = name
            stateSetAt = now
        }
    }
}

/// The stored form without `JSONEncoder` and `JSONDecoder` (a round reads and writes its checks' states): the bytes
/// of the sorted encoder, and exactly what the synthesized `Decodable` conformance reads.
extension ExternalizableState: JSONTextEncodable, JSONValueDecodable {
    package func write(to text: inout JSONText) {
        text.object { state in
            state.member("stateName", stateName)
            state.member("stateSetAt", stateSetAt)
        }
    }

    package init?(json: JSON) {
        guard case .object = json, let name = json.requiredString("stateName"), case .int(let setAt)? = json["stateSetAt"] else { return nil }
        stateName = name
        stateSetAt = setAt
    }
}
