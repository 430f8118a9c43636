import Foundation
@testable import GatehouseClient
import GatehouseProtocol
import Synchronization
import Testing

/// A transport that holds the first `count` requests whose path ends with `suffix` (as a slow network would) and
/// records whether a held request saw its task cancelled.
final class HoldingTransport: HTTPTransport {
    private let base = URLSessionTransport()
    private let matches: @Sendable (TransportRequest) -> Bool
    private let remaining: Mutex<Int>
    let held = Calls<String>()
    let cancelled = Calls<String>()
    private let log = Mutex<[TransportRequest]>([])

    init(holding suffix: String, count: Int = 1, where condition: @escaping @Sendable (TransportRequest) -> Bool = { _ in true }) {
        matches = { $0.url.path.hasSuffix(suffix) && condition($0) }
        remaining = Mutex(count)
    }

    func requests(to suffix: String) -> [TransportRequest] { log.withLock { $0 }.filter { $0.url.path.hasSuffix(suffix) } }

    func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        log.withLock { $0.append(request) }
        let hold = matches(request) && remaining.withLock { count in
            defer { count -= 1 }
            return count > 0
        }
        if hold {
            held.record(request.url.path)
            do {
                try await Task.sleep(for: .seconds(40))
            } catch {
                cancelled.record(request.url.path)
                throw .cancelled(underlying: error)
            }
        }
        return try await base.send(request)
    }
}

/// A handler that leaves its first challenge unanswered (the user looks away) and answers the next ones.
final class AnswerLaterHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let challenges = Calls<JSONObject>()
    let abandoned = Calls<GatehouseClientError>()

    override func handleChallenge(_ challenge: JSONObject) {
        challenges.record(challenge)
        if challenges.count > 1 { submitChallengeAnswer(["pin": "1234"]) }
    }

    override func challengeAbandoned(_ reason: GatehouseClientError) {
        abandoned.record(reason)
    }
}

/// A caller's cancelled task is passed on at every stage of the flow: the caller leaves at once with `cancelled`,
/// and the shared work (registration, challenge, token request) is cancelled when its last waiter leaves.
@Suite(.timeLimit(.minutes(3))) struct SDKCallerCancellationTests {
    /// Starts `count` callers of `body`, waits for `ready`, cancels them one by one; returns their errors and how
    /// long each took to leave after its cancel.
    static func cancelCallers(
        _ count: Int, ready: @escaping @Sendable () -> Bool, afterFirst: (@Sendable () async -> Void)? = nil,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws -> [(error: GatehouseClientError?, seconds: Double)] {
        let tasks = (0..<count).map { _ in Task { await SDK.error(body) } }
        try await waitUntil("the callers are ready to be cancelled", ready)
        var results: [(GatehouseClientError?, Double)] = []
        for (index, task) in tasks.enumerated() {
            let start = ContinuousClock.now
            task.cancel()
            let error = await task.value
            let elapsed = ContinuousClock.now - start
            results.append((error, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            if index == 0 { await afterFirst?() }
        }
        return results
    }

    /// Polls `condition` until it holds; fails naming `what` after 30 s.
    static func waitUntil(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(what): never held within 30 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func cancelledCallersLeaveARegistrationAtOnceAndTheLastCancelsIt() async throws {
        try await TestServer.run { server in
            let transport = HoldingTransport(holding: "/registration/v1/self")
            let client = SDK.client(server, transport: transport)
            let results = try await Self.cancelCallers(2, ready: { transport.held.count == 1 }, afterFirst: {
                #expect(transport.cancelled.count == 0, "the registration goes on for the caller still waiting")
            }) {
                _ = try await client.obtainAccessToken()
            }
            for (error, seconds) in results {
                #expect(error?.code == .cancelled)
                #expect(seconds < 5, "a cancelled caller leaves at once")
            }
            try await Self.waitUntil("the held request is cancelled") { transport.cancelled.count == 1 }
            // A later caller starts a registration afresh.
            let token = try await SDK.bounded(30) { try await client.obtainAccessToken() }
            #expect(token.scope == "RegisteredClient")
            #expect(transport.requests(to: "/registration/v1/self").count >= 1)
        }
    }

    @Test func cancelledCallersLeaveAnOpenChallengeAndTheLastAbandonsIt() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let handler = AnswerLaterHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            let results = try await Self.cancelCallers(3, ready: { handler.isChallengeOpen }, afterFirst: {
                #expect(handler.isChallengeOpen, "the challenge stays open for the callers still waiting")
            }) {
                _ = try await ResourceRequest(client: client, path: SDK.balancePath, scope: "accessRestricted").send()
            }
            for (error, seconds) in results {
                #expect(error?.code == .cancelled)
                #expect(seconds < 5)
            }
            try await Self.waitUntil("the challenge is closed") { !handler.isChallengeOpen }
            try await Self.waitUntil("the handler hears of the abandonment") { handler.abandoned.count == 1 }
            #expect(handler.abandoned.all.first?.code == .cancelled, "the handler hears that its challenge was abandoned")
            #expect(handler.challenges.count == 1)
            // The next request is challenged afresh, and this time answered.
            let balance = try await SDK.bounded(30) { try await ResourceRequest(client: client, path: SDK.balancePath).send().text }
            #expect(balance == "19938.80")
            #expect(handler.challenges.count == 2)
        }
    }

    @Test func cancelledCallersLeaveATokenRequestAndTheLastCancelsIt() async throws {
        try await TestServer.run { server in
            let transport = HoldingTransport(holding: "/az/v1/token")
            let client = SDK.client(server, transport: transport)
            try client.registerChallengeHandler(SDK.captchaHandler(Calls()))
            let results = try await Self.cancelCallers(2, ready: { transport.held.count == 1 }) {
                _ = try await client.obtainAccessToken(forScope: "SimpleCaptcha")
            }
            #expect(results.allSatisfy { $0.error?.code == .cancelled && $0.seconds < 5 })
            try await Self.waitUntil("the held request is cancelled") { transport.cancelled.count == 1 }
            let token = try await SDK.bounded(30) { try await client.obtainAccessToken(forScope: "SimpleCaptcha") }
            #expect(token.scope == "RegisteredClient SimpleCaptcha")
        }
    }

    /// A `login` that answers an open challenge and waits for the check's outcome leaves at once when cancelled;
    /// the flow goes on for its own caller.
    @Test func aCancelledLoginWaitingForTheOutcomeLeaves() async throws {
        try await TestServer.run { server in
            // The round that carries the answer is held on its way to the server.
            let transport = HoldingTransport(holding: "/preauth/v1/preauthorize") { $0.bodyJSON?["challengeResponse"] != nil }
            let client = SDK.client(server, transport: transport)
            let handler = SilentHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            let flow = Task { await SDK.error { _ = try await client.obtainAccessToken(forScope: "PinCodeAttempts") } }
            try await Self.waitUntil("the challenge is open") { handler.isChallengeOpen }
            let results = try await Self.cancelCallers(1, ready: { transport.held.count == 1 }) {
                _ = try await client.login(securityCheck: "PinCodeAttempts", credentials: ["pin": "1234"])
            }
            #expect(results.first?.error?.code == .cancelled)
            #expect((results.first?.seconds ?? 99) < 5)
            #expect(transport.cancelled.count == 0, "the flow goes on for the caller that still waits")
            flow.cancel()
            #expect(await flow.value?.code == .cancelled)
            try await Self.waitUntil("the held request is cancelled") { transport.cancelled.count == 1 }
        }
    }

    /// `URLSession`'s own cancellation: a request to a server that never answers ends at once when its task is
    /// cancelled, as `cancelled` with the `URLError` (or `CancellationError`) as cause.
    @Test func aCancelledURLSessionRequestIsCancelled() async throws {
        let (error, took) = try await SDK.cancelledSilentRequest(through: URLSessionTransport())
        #expect(error?.code == .cancelled)
        #expect(error?.underlying != nil)
        #expect(took < .seconds(10), "well before the 30 s timeout")
    }

    @Test func urlErrorsKeepTheirCause() {
        let request = TransportRequest(method: "GET", url: URL(string: "http://example.invalid/x")!)
        let cancelled = URLSessionTransport.error(URLError(.cancelled), for: request)
        #expect(cancelled.code == .cancelled)
        #expect((cancelled.underlying as? URLError)?.code == .cancelled)
        let timedOut = URLSessionTransport.error(URLError(.timedOut), for: request)
        #expect(timedOut == .timedOut(url: "http://example.invalid/x"))
        #expect((timedOut.underlying as? URLError)?.code == .timedOut)
        let offline = URLSessionTransport.error(URLError(.notConnectedToInternet), for: request)
        #expect(offline.code == .transport)
        #expect((offline.underlying as? URLError)?.code == .notConnectedToInternet)
        #expect(URLSessionTransport.error(CancellationError(), for: request).code == .cancelled)
    }
}

/// A TCP listener that accepts nothing and never answers: requests to it hang until cancelled.
final class SilentListener: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw TestFailure("bind or listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
