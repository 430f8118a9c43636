import Foundation
import GatehouseClient
import GatehouseProtocol
import Logging
import Synchronization
import Testing

/// A transport that records every request the SDK sends, and lets a test answer or rewrite some.
final class RecordingTransport: HTTPTransport {
    typealias Intercept = @Sendable (TransportRequest) -> TransportResponse?
    typealias Rewrite = @Sendable (TransportRequest, TransportResponse) -> TransportResponse

    private let base = URLSessionTransport()
    private let log = Mutex<[TransportRequest]>([])
    private let intercept: Intercept?
    private let rewrite: Rewrite?

    init(intercept: Intercept? = nil, rewrite: Rewrite? = nil) {
        self.intercept = intercept
        self.rewrite = rewrite
    }

    func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        log.withLock { $0.append(request) }
        if let answer = intercept?(request) { return answer }
        let response = try await base.send(request)
        return rewrite?(request, response) ?? response
    }

    var requests: [TransportRequest] { log.withLock { $0 } }
    var count: Int { log.withLock { $0.count } }
    func reset() { log.withLock { $0.removeAll() } }

    /// The requests whose path ends with `suffix` (and whose method is `method`, when given).
    func requests(to suffix: String, method: String? = nil) -> [TransportRequest] {
        requests.filter { $0.url.path.hasSuffix(suffix) && (method == nil || $0.method == method) }
    }
}

extension TransportRequest {
    var bodyJSON: JSON? { body.flatMap { try? JSONDecoder().decode(JSON.self, from: $0) } }
    var bodyForm: [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body ?? Data(), as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
    func header(_ name: String) -> String? { headers.last { $0.name.lowercased() == name.lowercased() }?.value }
}

/// Counts calls and keeps what they were called with.
final class Calls<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func record(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

enum SDK {
    static let pinApp = "com.sample.pincodeswift"
    static let balancePath = "adapters/ResourceAdapter/balance"

    /// The standard test policy with a longer `UserLogin` success: the server computes `expires_in` in whole
    /// seconds from the check's remaining success, so the standard 1-second success never yields a token.
    static func policy(userLoginSuccessSec seconds: Int) -> String {
        TestPolicies.standard.replacingOccurrences(
            of: "successStateExpirationSec: 1, rememberMeDurationSec", with: "successStateExpirationSec: \(seconds), rememberMeDurationSec")
    }

    /// A logger that keeps the test output quiet (errors only).
    static let quietLogger: Logger = {
        var logger = Logger(label: "gatehouse.client.test")
        logger.logLevel = .error
        return logger
    }()

    /// A client of `server` with an in-memory key store.
    static func client(
        _ server: TestServer, app: String = pinApp, platform: String = "ios", version: String = "1.0",
        keyStore: any KeyStore = InMemoryKeyStore(), transport: (any HTTPTransport)? = nil, challengeTimeout: Duration = .seconds(30),
        flowWaitTimeout: Duration = .seconds(300), logger: Logger = quietLogger
    ) -> GatehouseClient {
        var configuration = ClientConfiguration(
            serverURL: URL(string: server.baseURL)!, applicationID: app, platform: platform, version: version,
            device: DeviceData(id: "sdk-test-device", hardware: "TestPhone", platform: "ios 18"), challengeTimeout: challengeTimeout,
            logger: logger)
        configuration.flowWaitTimeout = flowWaitTimeout
        return GatehouseClient(configuration: configuration, keyStore: keyStore, transport: transport ?? URLSessionTransport())
    }

    /// A PinCodeAttempts handler that answers `pin` and records the challenges.
    static func pinHandler(_ calls: Calls<JSONObject>, pin: String = "1234", failures: Calls<JSONObject>? = nil) -> ClosureChallengeResponder {
        ClosureChallengeResponder(securityCheck: "PinCodeAttempts", onFailure: { failures?.record($0) }) { challenge in
            calls.record(challenge)
            return .answer(["pin": .string(pin)])
        }
    }

    /// A SimpleCaptcha handler that solves the captcha.
    static func captchaHandler(_ calls: Calls<JSONObject>) -> ClosureChallengeResponder {
        ClosureChallengeResponder(securityCheck: "SimpleCaptcha") { challenge in
            calls.record(challenge)
            return .answer(captchaAnswer(challenge))
        }
    }

    static func captchaAnswer(_ challenge: JSONObject) -> JSONObject {
        let sum = (challenge["captcha"]?.stringValue ?? "").split(separator: "+").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
        return ["answer": .string(String(sum))]
    }

    /// Runs `body`, failing the test instead of hanging when it takes longer than `seconds`.
    static func bounded<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<Result<T, any Error>>()
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            once.set(continuation)
            Task {
                do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                once.resume(.failure(TestFailure("did not finish within \(seconds) s")))
            }
        }
        return try result.get()
    }

    /// The error `body` throws, if it is a `GatehouseClientError`.
    /// Sends a request through `transport` to a server that accepts and never answers, cancels its task after
    /// 300 ms, and returns the error and how long the cancellation took to end the request.
    static func cancelledSilentRequest(through transport: any HTTPTransport) async throws -> (error: GatehouseClientError?, took: Duration) {
        let listener = try SilentListener()
        defer { listener.close() }
        let request = TransportRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/never")!, timeout: .seconds(30))
        let task = Task { await SDK.error { _ = try await transport.send(request) } }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        task.cancel()
        let error = await task.value
        return (error, ContinuousClock.now - start)
    }

    static func error(_ body: () async throws -> Void) async -> GatehouseClientError? {
        do {
            try await body()
            return nil
        } catch let error as GatehouseClientError {
            return error
        } catch {
            Issue.record("not a GatehouseClientError: \(error)")
            return nil
        }
    }

    /// The payload of a compact JWS.
    static func payload(ofJWS compact: String) -> JSON? {
        guard let jws = try? JWS(compact: compact), let data = Base64URL.decode(jws.payload) else { return nil }
        return try? JSONDecoder().decode(JSON.self, from: data)
    }

    static func header(ofJWS compact: String) -> JSON? {
        guard let jws = try? JWS(compact: compact), let data = Base64URL.decode(jws.header) else { return nil }
        return try? JSONDecoder().decode(JSON.self, from: data)
    }
}

/// A continuation resumed once.
final class Once<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)
    func set(_ value: CheckedContinuation<T, Never>) { continuation.withLock { $0 = value } }
    func resume(_ value: T) { continuation.withLock { $0.take() }?.resume(returning: value) }
}
