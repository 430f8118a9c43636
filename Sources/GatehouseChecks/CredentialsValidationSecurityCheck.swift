public import GatehouseProtocol

/// The configuration every credentials-validating check shares (MobileFirst's `CredentialsValidationSecurityCheckConfig`), with MobileFirst's defaults.
public struct CredentialsValidationConfiguration: Sendable, Equatable {
    /// Wrong answers before the client is blocked. Default 1.
    public var maxAttempts: Int
    /// Seconds to answer a challenge; attempts are counted within it. Default 120.
    public var attemptingStateExpirationSec: Int
    /// Seconds a success holds. Default 3600.
    public var successStateExpirationSec: Int
    /// Seconds a block lasts; 0, the default, ends it at once. Default 0.
    public var blockedStateExpirationSec: Int
    /// Seconds without activity after which the state is dropped; 0 for none.
    public var inactivityTimeoutSec: Int

    public init(maxAttempts: Int = 1, attemptingStateExpirationSec: Int = 120, successStateExpirationSec: Int = 3600,
                blockedStateExpirationSec: Int = 0, inactivityTimeoutSec: Int = 0) {
        self.maxAttempts = maxAttempts
        self.attemptingStateExpirationSec = attemptingStateExpirationSec
        self.successStateExpirationSec = successStateExpirationSec
        self.blockedStateExpirationSec = blockedStateExpirationSec
        self.inactivityTimeoutSec = inactivityTimeoutSec
    }

    /// Reads the properties, falling back to `defaults` for those not given.
    public init(properties: inout SecurityCheckProperties, defaults: CredentialsValidationConfiguration = .init()) {
        maxAttempts = properties.int("maxAttempts", default: defaults.maxAttempts, range: 1...1_000_000)
        attemptingStateExpirationSec = properties.int("attemptingStateExpirationSec", default: defaults.attemptingStateExpirationSec)
        successStateExpirationSec = properties.int("successStateExpirationSec", default: defaults.successStateExpirationSec)
        blockedStateExpirationSec = properties.int("blockedStateExpirationSec", default: defaults.blockedStateExpirationSec)
        inactivityTimeoutSec = properties.int("inactivityTimeoutSec", default: defaults.inactivityTimeoutSec)
        if blockedStateExpirationSec == 0 && maxAttempts > 1 {
            properties.warning("blockedStateExpirationSec", "is 0: a blocked client gets a fresh challenge at its next request")
        }
    }

    /// The durations of the states `attempting`, `success` and `blocked`.
    public var durations: ExternalizableState.Durations {
        [
            CredentialsValidationState<NoCheckData>.attempting: attemptingStateExpirationSec,
            CredentialsValidationState<NoCheckData>.success: successStateExpirationSec,
            CredentialsValidationState<NoCheckData>.blocked: blockedStateExpirationSec,
        ]
    }
}

/// Data a check keeps beside the state machine (an expected answer, a last error message, ...).
public protocol SecurityCheckData: Codable, Sendable, Equatable {
    init()
}

/// No data beside the state machine.
public struct NoCheckData: SecurityCheckData {
    public init() {}
}

/// The persisted state of a ``CredentialsValidationSecurityCheck``.
public struct CredentialsValidationState<Data: SecurityCheckData>: Codable, Sendable, Equatable {
    public static var attempting: String { "attempting" }
    public static var success: String { "success" }
    public static var blocked: String { "blocked" }

    public var machine = ExternalizableState()
    /// Wrong answers since the last change of state.
    public var usedAttempts = 0
    /// The check's own data.
    public var data = Data()

    public init() {}

    /// Wrong answers left before the block.
    public func remainingAttempts(_ configuration: CredentialsValidationConfiguration) -> Int {
        max(0, configuration.maxAttempts - usedAttempts)
    }

    /// The current state; an `attempting` state with no attempts left (after a configuration change) is blocked.
    public mutating func state(_ configuration: CredentialsValidationConfiguration, now: Int64) -> String {
        let current = machine.state(durations: configuration.durations, now: now)
        if current == Self.attempting && remainingAttempts(configuration) == 0 {
            setState(Self.blocked, configuration, now: now)
            return machine.state(durations: configuration.durations, now: now)
        }
        return current
    }

    /// Moves to `name`; any change resets the attempt counter.
    public mutating func setState(_ name: String, _ configuration: CredentialsValidationConfiguration, now: Int64) {
        // The three states always have durations, so this cannot fail.
        try? machine.setState(name, durations: configuration.durations, now: now)
        usedAttempts = 0
    }
}

/// The stored form without `JSONEncoder` when the check's data writes its own (the built-in checks'): the bytes of the
/// sorted encoder.
extension CredentialsValidationState: JSONTextWritable, JSONTextEncodable where Data: JSONTextWritable {
    package func write(to text: inout JSONText) {
        text.object { state in
            state.member("data", data)
            state.member("machine", machine)
            state.member("usedAttempts", Int64(usedAttempts))
        }
    }
}

/// The stored form read without `JSONDecoder` when the check's data reads its own (the built-in checks'): exactly
/// what the synthesized `Decodable` conformance reads, else `nil` and `JSONDecoder` decides.
extension CredentialsValidationState: JSONValueDecodable where Data: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let data = json["data"].flatMap(Data.init(json:)), let machine = json["machine"].flatMap(ExternalizableState.init(json:)),
              case .int(let used)? = json["usedAttempts"], let usedAttempts = Int(exactly: used)
        else { return nil }
        self.init()
        self.data = data
        self.machine = machine
        self.usedAttempts = usedAttempts
    }
}

/// No members, written and read without Foundation's coders.
extension NoCheckData: JSONTextWritable, JSONValueDecodable {
    package func write(to text: inout JSONText) { text.object { _ in } }

    package init?(json: JSON) {
        guard case .object = json else { return nil }
        self.init()
    }
}

/// A check that validates credentials, counts wrong answers and blocks after too many (MobileFirst Developer Center, “Implementing the CredentialsValidationSecurityCheck”).
///
/// Implement ``validateCredentials(_:state:client:)`` and ``createChallenge(state:client:)``; the protocol
/// provides `authorize`, `introspect` and `expiresAt` with the exact MobileFirst algorithm:
/// - a right answer moves to `success` for `successStateExpirationSec`;
/// - a wrong answer counts an attempt; the last one blocks, answering `{"failure":"Account blocked"}`;
/// - while blocked, answers are ignored until `blockedStateExpirationSec` has passed.
public protocol CredentialsValidationSecurityCheck: SecurityCheck where State == CredentialsValidationState<CheckData> {
    associatedtype CheckData: SecurityCheckData = NoCheckData

    /// Attempts and state durations.
    var validation: CredentialsValidationConfiguration { get }

    /// Whether the client's answer is right. Called only when the client sent credentials.
    func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool

    /// The challenge to send; `nil` sends an empty object.
    func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject?

    /// Data added to introspection while the check is in success; `nil` by default.
    func customIntrospectionData(state: State, client: ClientContext) -> JSONObject?
}

extension CredentialsValidationSecurityCheck {
    public var inactivityTimeoutSec: Int { validation.inactivityTimeoutSec }

    public func makeState() -> State { State() }

    /// A logout ends a success only: a block and the attempts used stay as they were (a client that logs out does
    /// not get its attempts back; MobileFirst's logout destroys only what the success granted).
    public func stateAfterLogout(_ state: State, client: ClientContext) -> State {
        var state = state
        switch state.state(validation, now: client.now) {
        case State.blocked, State.attempting: return state
        default: return makeState()
        }
    }

    public func expiresAt(state: State) -> Int64 { state.machine.expiresAt(durations: validation.durations) }

    public func customIntrospectionData(state: State, client: ClientContext) -> JSONObject? { nil }

    public func authorize(
        scope: Set<String>, credentials: JSONObject?, request: CheckRequest,
        state: inout State, client: inout ClientContext, response: inout AuthorizationResponse
    ) async throws {
        try await validateAndRespond(scope: scope, credentials: credentials, state: &state, client: &client, response: &response)
    }

    /// The credentials-validation algorithm, for checks that build on it (``UserAuthenticationSecurityCheck``).
    public func validateAndRespond(
        scope: Set<String>, credentials: JSONObject?,
        state: inout State, client: inout ClientContext, response: inout AuthorizationResponse
    ) async throws {
        let config = validation
        let now = client.now
        var current = state.state(config, now: now)
        if let credentials, current != State.blocked {
            if try await validateCredentials(credentials, state: &state, client: &client) {
                state.setState(State.success, config, now: now)
            } else {
                if current != State.attempting { state.setState(State.attempting, config, now: now) }
                state.usedAttempts += 1
                if state.remainingAttempts(config) == 0 { state.setState(State.blocked, config, now: now) }
            }
            current = state.state(config, now: now)
        }
        switch current {
        case State.success:
            response.addSuccess(scope: scope, expiresAt: expiresAt(state: state), checkName: name)
        case State.blocked:
            response.addFailure(checkName: name, failure: ["failure": "Account blocked"])
        default:
            if current != State.attempting { state.setState(State.attempting, config, now: now) }
            response.addChallenge(checkName: name, challenge: try await createChallenge(state: &state, client: &client) ?? [:])
        }
    }

    public func introspect(scope: Set<String>, state: inout State, client: inout ClientContext, response: inout IntrospectionResponse) async throws {
        if state.state(validation, now: client.now) == State.success {
            response.addIntrospectionData(
                checkName: name, scope: scope, expiresAt: expiresAt(state: state),
                customData: customIntrospectionData(state: state, client: client)
            )
        }
    }
}
