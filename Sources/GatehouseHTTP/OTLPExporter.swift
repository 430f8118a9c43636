import AsyncHTTPClient
import Foundation
package import GatehouseProtocol
public import Logging
import NIOCore
public import ServiceLifecycle
import Synchronization

/// Sends finished spans to an OpenTelemetry collector over OTLP/HTTP in its JSON encoding (``OTLPTraces``), in
/// batches: every ``interval``, when ``batchSize`` spans wait, and once more at shutdown. A service of the server's
/// (or gateway's) service group.
///
/// Tracing never slows or fails a request: spans wait in memory up to ``maximumQueued`` (more are dropped and
/// counted), an export that fails or takes over ``timeout`` (ten seconds) is dropped and said once in the log (again when exports
/// recover), and the collector's headers (`OTEL_EXPORTER_OTLP_HEADERS`, often a key) are never logged.
public final class OTLPExporter: Service, Sendable {
    /// The collector's traces URL (`http://collector:4318/v1/traces`).
    public let endpoint: String
    /// Extra request fields for the collector (an API key, say).
    public let headers: [(String, String)]
    /// The resource every span is reported under (`service.name`, `service.version`, `host.name`).
    package let resource: OTLPTraces.Resource
    public let interval: Duration
    public let batchSize: Int
    public let maximumQueued: Int
    /// How long one export may take (connecting included: an unreachable collector is tried until then).
    public let timeout: Duration
    private let logger: Logger
    private let state = Mutex(State())
    private let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    struct State {
        var pending: [OTLPTraces.Span] = []
        var dropped = 0
        var exported = 0
        var failing = false
    }

    /// An exporter to `endpoint`: a collector's base URL (`http://host:4318`, as `OTEL_EXPORTER_OTLP_ENDPOINT`), to
    /// which `/v1/traces` is added, or its full traces URL (one ending in `/v1/traces`).
    public init(endpoint: String, headers: [(String, String)] = [], serviceName: String, serviceVersion: String,
                interval: Duration = .seconds(1), batchSize: Int = 512, maximumQueued: Int = 8192, timeout: Duration = .seconds(10),
                logger: Logger) {
        self.endpoint = Self.tracesURL(endpoint)
        self.headers = headers
        self.resource = OTLPTraces.Resource(attributes: [
            .init("service.name", .string(serviceName)),
            .init("service.version", .string(serviceVersion)),
            .init("host.name", .string(ProcessInfo.processInfo.hostName)),
            .init("telemetry.sdk.name", .string("gatehouse")),
            .init("telemetry.sdk.language", .string("swift")),
        ])
        self.interval = interval
        self.batchSize = max(1, batchSize)
        self.maximumQueued = max(self.batchSize, maximumQueued)
        self.timeout = timeout
        self.logger = logger
    }

    /// `endpoint` with `/v1/traces` added unless it ends so already.
    static func tracesURL(_ endpoint: String) -> String {
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        return base.hasSuffix(OTLPTraces.path) ? base : base + OTLPTraces.path
    }

    /// The headers of `OTEL_EXPORTER_OTLP_HEADERS` (`key1=value1,key2=value2`, values percent-encoded); `nil` when it
    /// is malformed.
    public static func headers(parsing text: String) -> [(String, String)]? {
        var headers: [(String, String)] = []
        for pair in text.split(separator: ",") where !pair.allSatisfy(\.isWhitespace) {
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                  let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces).removingPercentEncoding
            else { return nil }
            headers.append((name, value))
        }
        return headers
    }

    /// Spans finished so far and not yet sent, sent, and dropped (queue full or export failed).
    public var counts: (pending: Int, exported: Int, dropped: Int) {
        state.withLock { ($0.pending.count, $0.exported, $0.dropped) }
    }

    /// Queues a finished span.
    func record(_ span: OTLPTraces.Span) {
        let full = state.withLock { state -> Bool in
            guard state.pending.count < maximumQueued else {
                state.dropped += 1
                return false
            }
            state.pending.append(span)
            return state.pending.count >= batchSize
        }
        if full { wake.yield() }
    }

    /// Asks for an export now rather than at the next interval.
    func flushSoon() { wake.yield() }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                // Ticks wake the exporter as a full batch does.
                group.addTask { [interval, wake] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        wake.yield()
                    }
                }
                for await _ in wakes {
                    await exportPending()
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [wake] in
            wake.finish()
        }
        await exportPending()
    }

    /// Sends what waits, a batch at a time.
    func exportPending() async {
        while true {
            let batch = state.withLock { state -> [OTLPTraces.Span] in
                let batch = Array(state.pending.prefix(batchSize))
                state.pending.removeFirst(batch.count)
                return batch
            }
            if batch.isEmpty { return }
            await export(batch)
        }
    }

    private func export(_ spans: [OTLPTraces.Span]) async {
        let body = OTLPTraces.ExportRequest(resourceSpans: [
            .init(resource: resource, scopeSpans: [.init(scope: .init(name: "gatehouse", version: nil), spans: spans)]),
        ])
        var problem: String?
        do {
            var request = HTTPClientRequest(url: endpoint)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: try SharedJSONCoders.sortedEncoder.encode(body)))
            let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(timeout.wholeNanoseconds))
            _ = try? await response.body.collect(upTo: 1 << 16)
            if !(200..<300).contains(response.status.code) { problem = "the collector answered \(response.status.code)" }
        } catch {
            problem = "\(error)"
        }
        let (logFailure, logRecovery) = state.withLock { state -> (Bool, Bool) in
            defer { state.failing = problem != nil }
            if problem != nil {
                state.dropped += spans.count
                return (!state.failing, false)
            }
            state.exported += spans.count
            return (false, state.failing)
        }
        if logFailure, let problem {
            logger.warning("Traces cannot be exported to \(endpoint) (\(problem)); spans are dropped until it answers")
        }
        if logRecovery { logger.notice("Traces are exported to \(endpoint) again") }
    }
}
