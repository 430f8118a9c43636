import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging

/// A client's state as one round sees it: the client context and the states of its checks, with the versions
/// they were read at, so that the round's changes are written back as one conditional update.
struct ClientSnapshot {
    /// The stored piece that holds the client context.
    static let contextName = "@client"

    /// The client context as stored (written by ``JSONText``, read by ``JSONReader`` as `JSONDecoder` would).
    struct StoredContext: Codable, Equatable, Sendable, JSONTextEncodable {
        var registration = RegistrationContext()
        var activeUser: AuthenticatedUser?
        /// Epoch ms of the client's last request; inactivity timeouts count from it.
        var lastActivity: Int64?

        func write(to text: inout JSONText) {
            text.object { context in
                context.member("activeUser", activeUser)
                context.member("lastActivity", lastActivity)
                context.member("registration", registration)
            }
        }
    }

    /// How stale the stored last activity may be before a round that changes nothing writes it anew, ms. A round
    /// that changes no check state and no client context writes nothing at all within this time (a client's
    /// repeated rounds, the authorization request right after a success), so inactivity timeouts count from a
    /// last activity recorded to within this time: they may end that much early, never late.
    static let activityResolution: Int64 = 1000

    var context: ClientContext
    private let stored: [String: VersionedState]
    /// The client context as read, to tell whether the round changed it.
    private let storedContext: StoredContext?
    private var lastActivity: Int64? { storedContext?.lastActivity }
    private var changed: [String: [UInt8]] = [:]
    /// Checks that granted the client before this round and no longer do (logout, block): their tokens are revoked.
    private(set) var lostGrants: [String] = []
    private let logger: Logger

    init(registration: ClientRegistrationRecord, stored: [String: VersionedState], now: Int64, logger: Logger) {
        self.stored = stored
        self.logger = logger
        let decoded = stored[Self.contextName].flatMap { try? DecodedStates.shared.decode(StoredContext.self, from: $0.data) }
        storedContext = decoded
        context = ClientContext(
            clientID: registration.clientID, application: registration.data.application, device: registration.data.device,
            now: now, registration: decoded?.registration ?? RegistrationContext(), activeUser: decoded?.activeUser)
    }

    /// The state of `check` for this client: stored, or new when there is none, it cannot be read, or the client
    /// was inactive for longer than the check's inactivity timeout.
    func state<C: SecurityCheck>(of check: C) -> C.State { readState(of: check).state }

    /// ``state(of:)``, and whether it is what the stored (or this round's) bytes hold: a state equal to it needs no
    /// write, and no encoding.
    private func readState<C: SecurityCheck>(of check: C) -> (state: C.State, isStored: Bool) {
        if check.inactivityTimeoutSec > 0, let lastActivity,
            context.now - lastActivity >= Int64(check.inactivityTimeoutSec) * 1000
        {
            return (check.makeState(), false)
        }
        guard let bytes = changed[check.name] ?? stored[check.name]?.data else { return (check.makeState(), false) }
        do {
            return (try DecodedStates.shared.decode(C.State.self, from: bytes), true)
        } catch {
            logger.warning("Stored state of check \(check.name) for client \(context.clientID) is unreadable; starting anew")
            return (check.makeState(), false)
        }
    }

    /// Records `state` as the new state of `check` unless it equals the stored one it came from.
    private mutating func keep<C: SecurityCheck>(_ state: C.State, of check: C, read: (state: C.State, isStored: Bool)) throws {
        if read.isStored, state == read.state { return }
        try setState(state, of: check)
    }

    /// Records the new state of `check`.
    mutating func setState<C: SecurityCheck>(_ state: C.State, of check: C) throws {
        // The built-in checks' states write their own JSON (the sorted encoder's bytes); others go through it.
        changed[check.name] = if let writable = state as? any JSONTextEncodable { writable.jsonText } else {
            [UInt8](try SharedJSONCoders.sortedEncoder.encode(state))
        }
    }

    /// Runs `authorize` of a check on this client.
    mutating func authorize<C: SecurityCheck>(
        _ check: C, scope: Set<String>, credentials: JSONObject?, request: CheckRequest, response: inout AuthorizationResponse
    ) async throws {
        let read = readState(of: check)
        var state = read.state
        let wasGranting = try await grants(check, state: state, scope: scope)
        try await check.authorize(scope: scope, credentials: credentials, request: request, state: &state, client: &context, response: &response)
        try keep(state, of: check, read: read)
        if wasGranting, try await !grants(check, state: state, scope: scope) { lostGrants.append(check.name) }
    }

    /// Whether `state` grants `scope`, by the check's own introspection, changing nothing.
    private func grants<C: SecurityCheck>(_ check: C, state: C.State, scope: Set<String>) async throws -> Bool {
        var state = state
        var context = context
        var response = IntrospectionResponse()
        try await check.introspect(scope: scope, state: &state, client: &context, response: &response)
        return response.entries[check.name] != nil
    }

    /// Runs `introspect` of a check on this client.
    mutating func introspect<C: SecurityCheck>(_ check: C, scope: Set<String>, response: inout IntrospectionResponse) async throws {
        let read = readState(of: check)
        var state = read.state
        try await check.introspect(scope: scope, state: &state, client: &context, response: &response)
        try keep(state, of: check, read: read)
    }

    /// Logs the client out of a check: the check's `logout`, then the state it leaves (``SecurityCheck/stateAfterLogout(_:client:)``:
    /// a fresh one, but a block or the attempts used stay).
    mutating func logout<C: SecurityCheck>(_ check: C) async throws {
        var state = state(of: check)
        try await check.logout(state: &state, client: &context)
        try setState(check.stateAfterLogout(state, client: context), of: check)
        lostGrants.append(check.name)
    }

    /// An operator's reset of a check (unblock): its state starts anew, and the tokens it granted stop holding.
    mutating func reset<C: SecurityCheck>(_ check: C) throws {
        try setState(check.makeState(), of: check)
        lostGrants.append(check.name)
    }

    /// The writes that store this round: every changed check state and the client context (whose activity time
    /// changes with every write, so that concurrent rounds of one client that write always conflict rather than
    /// interleave). A round that changes nothing writes nothing while the stored last activity is younger than
    /// ``activityResolution``: it only read, so it cannot interleave with another round's writes.
    func writes() throws -> [StateWrite] {
        var writes: [StateWrite] = []
        for (name, bytes) in changed.sorted(by: { $0.key < $1.key }) where bytes != stored[name]?.data {
            writes.append(StateWrite(name: name, expectedVersion: stored[name]?.version ?? 0, data: bytes))
        }
        let next = StoredContext(registration: context.registration, activeUser: context.activeUser, lastActivity: context.now)
        if writes.isEmpty, let storedContext, let last = storedContext.lastActivity, (0..<Self.activityResolution).contains(context.now - last),
            storedContext.registration == next.registration, storedContext.activeUser == next.activeUser
        {
            return []
        }
        writes.append(StateWrite(name: Self.contextName, expectedVersion: stored[Self.contextName]?.version ?? 0, data: next.jsonText))
        return writes
    }
}

extension ClientSnapshot.StoredContext: JSONValueDecodable {
    /// Read without `JSONDecoder`: exactly what the synthesized `Decodable` conformance reads.
    init?(json: JSON) {
        guard case .object = json, let registration = json["registration"].flatMap(RegistrationContext.init(json:)),
              let activeUser = json.optional("activeUser", as: AuthenticatedUser.self), let lastActivity = json.optionalInt("lastActivity")
        else { return nil }
        self.init(registration: registration, activeUser: activeUser, lastActivity: lastActivity)
    }
}
