package import GatehouseProtocol
public import Instrumentation
import Synchronization
public import Tracing

/// A span of ``OTLPTracer``: mutable until it ends, then handed to the exporter as OTLP's JSON shape (unless its
/// trace is not sampled, when it only carries ids for propagation).
public final class OTLPSpan: Tracing.Span, Sendable {
    public let context: InstrumentationContext
    /// The span's own ids (and its trace's).
    package let ids: TraceParent
    /// The parent span's id, when it has one.
    public let parentSpanID: UInt64?
    let kind: SpanKind
    let start: UInt64
    private let exporter: OTLPExporter?
    private let state: Mutex<State>

    struct State {
        var name: String
        var attributes = SpanAttributes()
        var events: [OTLPTraces.Event] = []
        var status: SpanStatus?
        var ended = false
    }

    init(_ name: String, context: InstrumentationContext, ids: TraceParent, parentSpanID: UInt64?, kind: SpanKind, start: UInt64,
         exporter: OTLPExporter?) {
        self.context = context
        self.ids = ids
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.start = start
        self.exporter = exporter
        self.state = Mutex(State(name: name))
    }

    public var isRecording: Bool { exporter != nil && !state.withLock(\.ended) }

    public var operationName: String {
        get { state.withLock(\.name) }
        set { state.withLock { if !$0.ended { $0.name = newValue } } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock(\.attributes) }
        set {
            guard exporter != nil else { return }
            state.withLock { if !$0.ended { $0.attributes = newValue } }
        }
    }

    public func setStatus(_ status: SpanStatus) { state.withLock { if !$0.ended { $0.status = status } } }

    public func addEvent(_ event: SpanEvent) {
        guard exporter != nil else { return }
        let recorded = OTLPTraces.Event(timeUnixNano: event.nanosecondsSinceEpoch, name: event.name, attributes: Self.keyValues(event.attributes))
        state.withLock { if !$0.ended { $0.events.append(recorded) } }
    }

    /// An `exception` event naming the error's type only: an error's text may carry what a client sent.
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        guard exporter != nil else { return }
        var keyValues = Self.keyValues(attributes)
        keyValues.append(.init("exception.type", .string(String(describing: type(of: error)))))
        let event = OTLPTraces.Event(timeUnixNano: instant().nanosecondsSinceEpoch, name: "exception", attributes: keyValues)
        state.withLock { if !$0.ended { $0.events.append(event) } }
    }

    public func addLink(_ link: SpanLink) {}

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let finished = state.withLock({ state -> State? in
            if state.ended { return nil }
            state.ended = true
            return state
        }) else { return }
        guard let exporter else { return }
        let status = finished.status.map { OTLPTraces.Status(code: $0.code == .ok ? 1 : 2, message: $0.message) }
        exporter.record(OTLPTraces.Span(
            traceId: ids.traceIDHex, spanId: ids.spanIDHex, parentSpanId: parentSpanID.map { TraceParent.hex($0, digits: 16) },
            name: finished.name, kind: Self.kind(kind), startTimeUnixNano: start, endTimeUnixNano: max(start, instant().nanosecondsSinceEpoch),
            attributes: Self.keyValues(finished.attributes), events: finished.events.isEmpty ? nil : finished.events, status: status))
    }

    static func kind(_ kind: SpanKind) -> OTLPTraces.Kind {
        switch kind {
        case .server: .server
        case .client: .client
        case .producer: .producer
        case .consumer: .consumer
        default: .internal
        }
    }

    static func keyValues(_ attributes: SpanAttributes) -> [OTLPTraces.KeyValue] {
        var keyValues: [OTLPTraces.KeyValue] = []
        attributes.forEach { key, attribute in
            if let value = value(attribute) { keyValues.append(.init(key, value)) }
        }
        return keyValues.sorted { $0.key < $1.key }
    }

    static func value(_ attribute: SpanAttribute) -> OTLPTraces.AnyValue? {
        switch attribute {
        case .int32(let value): .int(Int64(value))
        case .int64(let value): .int(value)
        case .double(let value): .double(value)
        case .bool(let value): .bool(value)
        case .string(let value): .string(value)
        case .int32Array(let values): .array(values.map { .int(Int64($0)) })
        case .int64Array(let values): .array(values.map { .int($0) })
        case .doubleArray(let values): .array(values.map { .double($0) })
        case .boolArray(let values): .array(values.map { .bool($0) })
        case .stringArray(let values): .array(values.map { .string($0) })
        default: nil
        }
    }
}
