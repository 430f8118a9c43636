import Foundation
import GatehouseHTTP
import GatehouseProtocol
import Hummingbird
import Logging
import Synchronization

/// An OpenTelemetry collector for the tests: receives OTLP/HTTP JSON exports on `POST /v1/traces` (a free loopback
/// port), keeps their spans and the fields the exports came with.
final class TraceCollector: Sendable {
    private let app: RunningApp
    private let received: Received
    /// Its base URL, as `--otlp-endpoint` takes it.
    let endpoint: String

    /// What arrived.
    final class Received: Sendable {
        let state = Mutex<(spans: [OTLPTraces.Span], fields: [[String: String]], resources: [OTLPTraces.Resource])>(([], [], []))
        func withLock<T>(_ body: (inout (spans: [OTLPTraces.Span], fields: [[String: String]], resources: [OTLPTraces.Resource])) -> T) -> T {
            state.withLock { body(&$0) }
        }
    }

    private init(app: RunningApp, received: Received) {
        self.app = app
        self.received = received
        endpoint = "http://127.0.0.1:\(app.port)"
    }

    static func start() async throws -> TraceCollector {
        let received = Received()
        let router = Router()
        router.post("v1/traces") { request, context -> Response in
            let body = try await request.body.collect(upTo: 8 << 20)
            guard request.headers[.contentType] == "application/json" else { return Response(status: .unsupportedMediaType) }
            let export = try JSONDecoder().decode(OTLPTraces.ExportRequest.self, from: Data(buffer: body))
            var fields: [String: String] = [:]
            for field in request.headers { fields[field.name.canonicalName] = field.value }
            received.withLock { received in
                received.fields.append(fields)
                for resourceSpans in export.resourceSpans {
                    received.resources.append(resourceSpans.resource)
                    for scope in resourceSpans.scopeSpans { received.spans += scope.spans }
                }
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        return TraceCollector(app: try await RunningApp.start(router: router), received: received)
    }

    /// An exporter sending here every 50 ms.
    func exporter(serviceName: String = "gatehouse-test", headers: [(String, String)] = []) -> OTLPExporter {
        var logger = Logger(label: "trace-test")
        logger.logLevel = .warning
        return OTLPExporter(endpoint: endpoint, headers: headers, serviceName: serviceName, serviceVersion: "test",
                            interval: .milliseconds(50), logger: logger)
    }

    var spans: [OTLPTraces.Span] { received.withLock { $0.spans } }
    var exportFields: [[String: String]] { received.withLock { $0.fields } }
    var resources: [OTLPTraces.Resource] { received.withLock { $0.resources } }

    /// The spans received, once `ready` holds of them (polled every 50 ms, up to `seconds`).
    func spans(within seconds: Double = 10, until ready: ([OTLPTraces.Span]) -> Bool) async throws -> [OTLPTraces.Span] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let spans = self.spans
            if ready(spans) { return spans }
            guard ContinuousClock.now < deadline else { return spans }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The spans of the trace whose root is the first span named `rootName` (after waiting for `count` spans in it).
    func trace(rootName: String, spans count: Int) async throws -> (root: OTLPTraces.Span, spans: [OTLPTraces.Span])? {
        let spans = try await spans { spans in
            guard let root = spans.first(where: { $0.name == rootName }) else { return false }
            return spans.filter { $0.traceId == root.traceId }.count >= count
        }
        guard let root = spans.first(where: { $0.name == rootName }) else { return nil }
        return (root, spans.filter { $0.traceId == root.traceId })
    }

    func stop() async { await app.stop() }
}

extension [OTLPTraces.Span] {
    /// The spans whose parent is `span`.
    func children(of span: OTLPTraces.Span) -> [OTLPTraces.Span] { filter { $0.parentSpanId == span.spanId } }
    func named(_ name: String) -> [OTLPTraces.Span] { filter { $0.name == name } }
}
