import Crypto
import Foundation
public import GatehouseChecks
public import GatehouseProtocol
import GatehouseStore
import Logging

/// Pre-authorization rounds: the checks a scope maps to, run on the client's state under its lock.
extension AuthorizationService {
    /// One pre-authorization round: runs every check the scope maps to with the client's answers.
    public func preauthorize(_ request: PreauthorizeRequest, checkRequest: CheckRequest) async throws -> PreauthorizeOutcome {
        var answers: [String: JSONObject?] = [:]
        for (name, answer) in request.challengeResponse ?? [:] {
            switch answer {
            case .object(let object): answers[name] = object
            case .null: answers[name] = .some(nil)
            default: throw AuthorizationError.invalidRequest("challengeResponse.\(name.prefix(64)) must be a JSON object")
            }
        }
        // Answers from an address locked by its wrong answers (or wrong secrets) are not judged: 429 before any
        // check runs. Wrong answers are counted against the address below, whatever the check and the registration,
        // so registering again buys no fresh attempts.
        let sources = policies.current.sourceThrottle
        let source = RequestSource.address
        if !answers.isEmpty, let sources, let source { try await sources.refuseIfLocked(source, now: EpochTime.nowMillis()) }
        let round: (response: AuthorizationResponse, outcomes: [AuditEvent], counted: [(check: String, type: AuthorizationResponse.ResponseType?, answered: Bool)])
        do {
            // The proof first, once (a round lost to another node's is run again, its proof used up already).
            round = try await withRegisteredClient(request.client_id, first: { record, application in
                guard application.requireProofOfPossession else { return }
                try await assertions.verifyProof(checkRequest.headers[ProofOfPossession.field.lowercased()], of: record, method: "POST",
                                                 path: "preauth/v1/preauthorize", now: EpochTime.nowMillis())
            }) { record, application, snapshot in
                let checks = try checks(of: application, for: Scope(request.scope), version: record.data.application.version)
                var response = AuthorizationResponse()
                var outcomes: [AuditEvent] = []
                var counted: [(check: String, type: AuthorizationResponse.ResponseType?, answered: Bool)] = []
                var succeeded: Set<String> = []
                for (check, elements) in checks {
                    // A check whose required checks have not all succeeded in this round waits for them: it asks
                    // nothing yet (a second factor after the login).
                    if let required = application.dependencies[check.name], !required.allSatisfy(succeeded.contains) { continue }
                    var own = AuthorizationResponse()
                    let credentials = answers[check.name] ?? nil
                    try await TracedWork.run("check \(check.name)", attributes: ["gatehouse.security_check": .string(check.name)]) {
                        try await snapshot.authorize(check, scope: elements, credentials: credentials, request: checkRequest, response: &own)
                    }
                    response.merge(own)
                    if own.type == .success { succeeded.insert(check.name) }
                    counted.append((check.name, own.type, credentials != nil))
                    // A notified or disabled app version is told that first, alone: no other check asks anything of it
                    // in this round (MobileFirst's remote disable comes before the app's own challenges).
                    if check is RemoteDisable, own.type != .success { break }
                    // An answer was judged: a success, a wrong answer (challenged again) or a block (refused).
                    if credentials != nil, let type = own.type {
                        let event = switch type {
                        case .success: "check.success"
                        case .challenge: "check.failure"
                        case .failure: "check.blocked"
                        }
                        outcomes.append(AuditEvent(
                            time: snapshot.context.now, event: event, clientID: record.clientID, application: record.data.application.id,
                            user: snapshot.context.activeUser?.id, check: check.name, address: checkRequest.remoteAddress))
                    }
                }
                return (response, outcomes, counted)
            }
        } catch let refusal as DeviceRefusal {
            // The device (or the application on it) is blocked by an operator: a failure, as a blocked check's.
            audit.record("device.refused", clientID: request.client_id, address: checkRequest.remoteAddress, detail: refusal.status.rawValue)
            var response = AuthorizationResponse()
            response.addFailure(checkName: DeviceAccessWire.failureName, failure: refusal.failure)
            return PreauthorizeOutcome(response: response, serverTime: EpochTime.nowMillis())
        }
        let (response, outcomes, counted) = round
        for (check, type, answered) in counted {
            let outcome: GatehouseMetrics.CheckOutcome? = switch type {
            case .success?: .success
            case .challenge?: .challenge
            case .failure?: .block
            case nil: nil
            }
            metrics.check(check, outcome: outcome, answered: answered)
        }
        audit.record(outcomes)
        if let sources, let source {
            let wrong = outcomes.filter { $0.event != "check.success" }.count
            for _ in 0..<wrong { try await sources.recordFailure(source, now: EpochTime.nowMillis()) }
        }
        return PreauthorizeOutcome(response: response, serverTime: EpochTime.nowMillis())
    }

    func checks(of application: ApplicationPolicy, for scope: Scope, version: String?) throws -> [(check: any SecurityCheck, scope: Set<String>)] {
        do {
            return try application.checks(for: scope, version: version)
        } catch {
            throw AuthorizationError.unmappedScope(
                "Scope element '\(error.element.prefix(64))' maps to no security check of application \(application.id).")
        }
    }

    /// Runs `body` on the client's state under the client's lock, and stores its changes atomically; a round that
    /// lost a race against another node is run again on fresh state.
    func withClient<T: Sendable>(_ record: ClientRegistrationRecord, _ body: (inout ClientSnapshot) async throws -> T) async throws -> T {
        try await locks.withLock(record.clientID) { try await rounds(of: record, state: nil, body) }
    }

    /// ``withClient(_:_:)`` for a client known by its id: under the client's lock, its registration, state and
    /// device's hold are read together (one store read); unknown → 400 `INVALID_CLIENT_ID`. `first` runs once, before
    /// anything is said of the client (a proof of possession: who cannot prove it is the client learns nothing more);
    /// then a client whose device refuses its application (``DeviceRefusal``) is thrown as that, before any round.
    func withRegisteredClient<T: Sendable>(
        _ clientID: String, first: (ClientRegistrationRecord, ApplicationPolicy) async throws -> Void = { _, _ in },
        _ body: (ClientRegistrationRecord, ApplicationPolicy, inout ClientSnapshot) async throws -> T
    ) async throws -> T {
        try await locks.withLock(clientID) {
            guard let stored = try await store.storedClient(clientID: clientID) else {
                throw AuthorizationError.unknownClient(clientID)
            }
            let record = stored.registration
            let application = try application(for: record.data)
            try await first(record, application)
            if let refusal = DeviceRefusal(stored.device, application: record.data.application.id) { throw refusal }
            return try await rounds(of: record, state: stored.state) { snapshot in try await body(record, application, &snapshot) }
        }
    }

    /// The rounds of ``withClient(_:_:)``, the lock held: the first on `state` if given, the others on state read anew.
    private func rounds<T: Sendable>(
        of record: ClientRegistrationRecord, state: [String: VersionedState]?, _ body: (inout ClientSnapshot) async throws -> T
    ) async throws -> T {
        var prefetched = state
        for _ in 0..<maxRoundRetries {
            let stored: [String: VersionedState]
            if let state = prefetched {
                stored = state
                prefetched = nil
            } else {
                stored = try await store.clientState(clientID: record.clientID)
            }
            var snapshot = ClientSnapshot(registration: record, stored: stored, now: EpochTime.nowMillis(), logger: logger)
            let userBefore = snapshot.context.activeUser?.id
            let result = try await body(&snapshot)
            let writes = try snapshot.writes()   // none for a round that changed nothing (see ClientSnapshot.writes)
            let committed = try await writes.isEmpty ? true : store.commit(clientID: record.clientID, writes: writes)
            if committed {
                if !writes.isEmpty { introspectedClients.forget(record.clientID) }
                if snapshot.context.activeUser?.id != userBefore {
                    try await store.setActiveUser(clientID: record.clientID, userID: snapshot.context.activeUser?.id)
                }
                if !snapshot.lostGrants.isEmpty {
                    try await validator.revocations.add(snapshot.lostGrants.map {
                        RevocationRecord(subject: .grant(clientID: record.clientID, check: $0), revokedAt: snapshot.context.now)
                    })
                }
                return result
            }
        }
        throw AuthorizationError.conflict
    }
}
