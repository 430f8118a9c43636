import Foundation
import GatehouseProtocol

/// The pre-authorization conversation (MobileFirst runtime REST API `preauth/v1/preauthorize`; the SDKs' challenge handlers): rounds of `POST preauth/v1/preauthorize` until
/// every check of the scope succeeds.
///
/// Successes go to their handlers' `handleSuccess`; a challenge goes to its handler, and when a round
/// challenges several checks, every handler is asked (concurrently) and the request is resent once all have
/// answered, with all answers in one `challengeResponse`. A wrong answer brings a new challenge, so the handler
/// is asked again. Failures go to `handleFailure` and end the conversation with their payload. A cancelled or
/// unanswered challenge ends it with ``GatehouseClientError/challengeCancelled(securityCheck:)`` or
/// ``GatehouseClientError/challengeTimedOut(securityCheck:)``.
struct Preauthorizer: Sendable {
    let api: RuntimeAPI
    let registry: ChallengeHandlerRegistry

    /// How many times a `409 MFP-Conflict` answer is resent.
    static let maxConflictRetries = 7
    /// How many gateway challenges one conversation goes through.
    static let maxGatewayRounds = 5

    /// Runs the conversation for `scope`; returns the successes of the last round.
    ///
    /// - Parameters:
    ///   - answers: answers to send in the first round (a pre-emptive `login`).
    ///   - origin: the sequence number of the request this conversation serves (see
    ///     ``ChallengeHandlerRegistry/nextSequence()``).
    func run(identity: ClientIdentity, scope: String, answers initial: [String: JSON]? = nil, origin: UInt64)
        async throws(GatehouseClientError) -> [String: JSON]
    {
        var asked = Set(initial?.keys ?? [:].keys)
        do {
            let successes = try await rounds(identity: identity, scope: scope, answers: initial, origin: origin, asked: &asked)
            for check in asked { registry.settle(check, .success(successes[check]?.objectValue ?? [:])) }
            return successes
        } catch {
            for check in asked { registry.settle(check, .failure(error)) }
            throw error
        }
    }

    private func rounds(identity: ClientIdentity, scope: String, answers initial: [String: JSON]?, origin: UInt64, asked: inout Set<String>)
        async throws(GatehouseClientError) -> [String: JSON]
    {
        var answers = initial
        var conflicts = 0
        var gatewayRounds = 0
        while true {
            let path = "preauth/v1/preauthorize"
            let response = try await api.sendJSON(
                "POST", path, PreauthorizeRequest(clientID: identity.clientID, scope: scope, challengeResponse: answers),
                headers: [try api.proof(for: identity, method: "POST", path: path)])
            let body = try? JSONDecoder().decode(PreauthorizeResponse.self, from: response.body)
            if let successes = body?.successes { await report(successes) }
            switch response.status {
            case 200:
                return body?.successes ?? [:]
            case 401 where response.header("WWW-Authenticate")?.contains(ProtocolNames.mfpChallenge) == true && body?.challenges != nil:
                let challenges = body?.challenges ?? [:]
                asked.formUnion(challenges.keys)
                answers = try await answer(challenges, origin: origin)
            case 403 where body?.failures != nil:
                let failures = body?.failures ?? [:]
                for (name, data) in failures.sorted(by: { $0.key < $1.key }) {
                    api.observer.report(GatehouseEvent(.securityCheckFailed, securityCheck: name, payload: data.objectValue ?? [:]))
                    if let responder = await registry.responder(for: name) {
                        let failure = data.objectValue ?? [:]
                        await DeferredHooks.call { await responder.handleFailure(failure) }
                    }
                }
                if let disabled = failures[RemoteDisableWire.checkName] {
                    throw .applicationDisabled(message: disabled[RemoteDisableWire.message]?.stringValue ?? "",
                                               downloadLink: disabled[RemoteDisableWire.downloadLink]?.stringValue)
                }
                if let blocked = failures[DeviceAccessWire.failureName]?.objectValue {
                    throw .deviceBlocked(message: blocked[DeviceAccessWire.failure]?.stringValue ?? "", failure: blocked)
                }
                throw .securityCheckFailed(failures: failures)
            case 409 where response.header(ProtocolNames.conflictHeader) != nil:
                conflicts += 1
                guard conflicts <= Self.maxConflictRetries else { throw .conflict }
            default:
                if gatewayRounds < Self.maxGatewayRounds, let gateway = registry.gateway(for: ResourceResponse(response)) {
                    gatewayRounds += 1
                    try await Self.handle(gateway, ResourceResponse(response), timeout: api.configuration.challengeTimeout, observer: api.observer)
                } else {
                    throw RuntimeAPI.error(from: response)
                }
            }
        }
    }

    /// Clock synchronisation and `handleSuccess`.
    private func report(_ successes: [String: JSON]) async {
        if let stamp = successes[ProtocolNames.clockSynchronization]?["serverTimeStamp"]?.doubleValue {
            api.clock.synchronize(serverTimeStamp: Int64(stamp))
        }
        for (name, data) in successes.sorted(by: { $0.key < $1.key }) where name != ProtocolNames.clockSynchronization {
            api.observer.report(GatehouseEvent(.securityCheckSucceeded, securityCheck: name, payload: data.objectValue ?? [:]))
            if let responder = await registry.responder(for: name) {
                let success = data.objectValue ?? [:]
                await DeferredHooks.call { await responder.handleSuccess(success) }
            }
        }
    }

    /// Asks every challenged check's handler, concurrently; returns the answers once all have answered.
    private func answer(_ challenges: [String: JSON], origin: UInt64) async throws(GatehouseClientError) -> [String: JSON] {
        var challenges = challenges
        var acknowledged: [String: JSON] = [:]
        // An administrator's notice without a handler of the app's: told as an event, acknowledged here.
        if let notice = challenges[RemoteDisableWire.checkName], registry.responder(for: RemoteDisableWire.checkName) == nil {
            challenges[RemoteDisableWire.checkName] = nil
            api.observer.report(GatehouseEvent(.administratorMessage, securityCheck: RemoteDisableWire.checkName, payload: notice.objectValue ?? [:]))
            acknowledged[RemoteDisableWire.checkName] = [RemoteDisableWire.messageID: notice[RemoteDisableWire.messageID] ?? .null]
            if challenges.isEmpty { return acknowledged }
        }
        let names = challenges.keys.sorted()
        var responders: [String: any SecurityCheckChallengeResponder] = [:]
        for name in names {
            guard let responder = registry.responder(for: name) else { throw .missingChallengeHandler(securityCheck: name) }
            responders[name] = responder
        }
        // A challenge abandoned while this request was in flight fails it without asking again.
        for name in names {
            if let error = registry.abandonment(of: name, since: origin) { throw error }
        }
        let timeout = api.configuration.challengeTimeout
        let registry = self.registry
        let observer = api.observer
        // The first failure is the one to report: the other questions are then abandoned (their tasks cancelled).
        let (answers, failure) = await withTaskGroup(of: (String, Result<JSON, GatehouseClientError>).self) { group in
            for name in names {
                let responder = responders[name]!
                let challenge = challenges[name]?.objectValue ?? [:]
                group.addTask { (name, await Self.ask(responder, challenge, timeout: timeout, registry: registry, observer: observer)) }
            }
            var answers: [String: JSON] = [:]
            var failure: GatehouseClientError?
            for await (name, result) in group {
                switch result {
                case .success(let answer):
                    answers[name] = answer
                case .failure(let error):
                    if failure == nil {
                        failure = error
                        group.cancelAll()
                    }
                }
            }
            return (answers, failure)
        }
        if let failure { throw failure }
        return answers.merging(acknowledged) { answer, _ in answer }
    }

    /// Puts one challenge to its responder, bounded by `timeout`; a `login` for the check may answer it instead.
    /// A challenge abandoned without the app (timeout, the request's task cancelled) is reported to the responder's
    /// ``SecurityCheckChallengeResponder/challengeAbandoned(_:)``, so that its prompt can go away.
    private static func ask(_ responder: any SecurityCheckChallengeResponder, _ challenge: JSONObject, timeout: Duration,
                            registry: ChallengeHandlerRegistry, observer: ClientObserver) async -> Result<JSON, GatehouseClientError>
    {
        let name = responder.securityCheck
        let resolver = Deadline.Resolver<ChallengeAnswer>()
        registry.open(name, .init(resolver: resolver))
        observer.report(GatehouseEvent(.challengeReceived, securityCheck: name, payload: challenge))
        let outcome = await Deadline.run(within: timeout, resolver: resolver) { await responder.respond(to: challenge) }
        registry.close(name)
        let result: Result<JSON, GatehouseClientError>
        switch outcome {
        case .value(.answer(let answer)):
            result = .success(.object(answer))
        case .value(.empty):
            result = .success(.null)
        case .value(.cancel):
            registry.abandon(name, with: .challengeCancelled(securityCheck: name))
            observer.report(GatehouseEvent(.challengeCancelled, securityCheck: name))
            return .failure(.challengeCancelled(securityCheck: name))
        case .timedOut:
            registry.abandon(name, with: .challengeTimedOut(securityCheck: name))
            result = .failure(.challengeTimedOut(securityCheck: name))
        case .cancelled:
            // The request's task was cancelled (its callers left, or another check of the round failed).
            result = .failure(.cancelled(underlying: CancellationError()))
        }
        switch result {
        case .success:
            observer.report(GatehouseEvent(.challengeAnswered, securityCheck: name))
        case .failure(let reason):
            observer.report(GatehouseEvent(.challengeAbandoned, securityCheck: name, error: reason))
            await DeferredHooks.call { await responder.challengeAbandoned(reason) }
        }
        return result
    }

    /// Puts a gateway challenge to its handler, bounded by `timeout`.
    static func handle(_ gateway: LoginPageChallengeHandler, _ response: ResourceResponse, timeout: Duration, observer: ClientObserver)
        async throws(GatehouseClientError)
    {
        observer.report(GatehouseEvent(.challengeReceived, securityCheck: gateway.name))
        let reason: GatehouseClientError
        switch await Deadline.run(within: timeout, { await gateway.respond(to: response) }) {
        case .value(true):
            observer.report(GatehouseEvent(.challengeAnswered, securityCheck: gateway.name))
            return
        case .value(false):
            observer.report(GatehouseEvent(.challengeCancelled, securityCheck: gateway.name))
            throw .challengeCancelled(securityCheck: gateway.name)
        case .timedOut: reason = .challengeTimedOut(securityCheck: gateway.name)
        case .cancelled: reason = .cancelled(underlying: CancellationError())
        }
        observer.report(GatehouseEvent(.challengeAbandoned, securityCheck: gateway.name, error: reason))
        gateway.challengeAbandoned(reason)
        throw reason
    }
}
