package import GatehouseProtocol
public import Instrumentation
public import Tracing

/// Gatehouse's tracer (swift-distributed-tracing's `Tracer`): spans with W3C trace context ids, exported by an
/// ``OTLPExporter`` to an OpenTelemetry collector. Off unless `--otlp-endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`)
/// names a collector; then `serve` traces every request (a span per request, a child per security check, store call
/// and bcrypt verification) and `gateway` every relayed exchange (its admission and its upstream exchange, the
/// upstream getting a `traceparent`).
///
/// Nothing is bootstrapped globally: servers bind it to their requests' tasks (`withTracer`), so several servers in
/// one process (tests, embedding) trace to their own collectors, or not at all.
public final class OTLPTracer: Tracer, Sendable {
    public typealias Span = OTLPSpan

    /// Where finished spans go.
    public let exporter: OTLPExporter
    /// The share of new traces recorded (a trace a caller started follows the caller's `sampled` flag).
    public let sampleRatio: Double

    public init(exporter: OTLPExporter, sampleRatio: Double = 1) {
        self.exporter = exporter
        self.sampleRatio = min(max(sampleRatio, 0), 1)
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> OTLPSpan {
        var context = context()
        let parent = context.traceParent
        let ids: TraceParent
        if let parent {
            ids = TraceParent(traceHigh: parent.traceHigh, traceLow: parent.traceLow, spanID: Self.newID(), sampled: parent.sampled)!
        } else {
            let sampled = sampleRatio >= 1 || (sampleRatio > 0 && Double.random(in: 0..<1) < sampleRatio)
            ids = TraceParent(traceHigh: Self.newID(), traceLow: Self.newID(), spanID: Self.newID(), sampled: sampled)!
        }
        context.traceParent = ids
        return OTLPSpan(operationName, context: context, ids: ids, parentSpanID: parent?.spanID, kind: kind,
                        start: instant().nanosecondsSinceEpoch, exporter: ids.sampled ? exporter : nil)
    }

    /// Reads a caller's `traceparent` (only callers the server trusts are asked).
    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        if let value = extractor.extract(key: TraceParent.field, from: carrier), let parent = TraceParent(value) {
            context.traceParent = parent
        }
    }

    /// Writes the context's span as a `traceparent`.
    public func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        if let parent = context.traceParent { injector.inject(parent.text, forKey: TraceParent.field, into: &carrier) }
    }

    public func forceFlush() { exporter.flushSoon() }

    /// A random non-zero 64-bit id.
    static func newID() -> UInt64 { UInt64.random(in: 1...UInt64.max) }
}

/// The span a context is in (or the remote caller's, once extracted).
enum TraceParentKey: InstrumentationContextKey {
    typealias Value = TraceParent
    static let nameOverride: String? = "traceparent"
}

extension InstrumentationContext {
    /// The W3C trace context of the span this context is in, or of the remote caller's span.
    package var traceParent: TraceParent? {
        get { self[TraceParentKey.self] }
        set { self[TraceParentKey.self] = newValue }
    }
}
