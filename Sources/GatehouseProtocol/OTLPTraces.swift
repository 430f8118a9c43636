/// OpenTelemetry's OTLP/HTTP trace export in its JSON encoding (`POST /v1/traces`,
/// `Content-Type: application/json`; opentelemetry-proto `ExportTraceServiceRequest`): what `gatehouse serve` and
/// `gatehouse gateway` send to a collector when tracing is on. As OTLP's JSON mapping asks: trace and span ids in
/// lower-case hexadecimal (not base64), 64-bit integers as decimal strings, enumerations as their numbers, field names
/// in lowerCamelCase; absent optional fields left out.
public enum OTLPTraces {
    /// The path a collector receives traces on.
    public static let path = "/v1/traces"

    /// The body of one export.
    public struct ExportRequest: Codable, Sendable, Equatable {
        public var resourceSpans: [ResourceSpans]
        public init(resourceSpans: [ResourceSpans]) { self.resourceSpans = resourceSpans }
    }

    /// The spans of one process (`service.name` and the like in its resource).
    public struct ResourceSpans: Codable, Sendable, Equatable {
        public var resource: Resource
        public var scopeSpans: [ScopeSpans]
        public init(resource: Resource, scopeSpans: [ScopeSpans]) {
            self.resource = resource
            self.scopeSpans = scopeSpans
        }
    }

    public struct Resource: Codable, Sendable, Equatable {
        public var attributes: [KeyValue]
        public init(attributes: [KeyValue]) { self.attributes = attributes }
    }

    /// The spans made by one instrumentation scope (Gatehouse's).
    public struct ScopeSpans: Codable, Sendable, Equatable {
        public var scope: Scope
        public var spans: [Span]
        public init(scope: Scope, spans: [Span]) {
            self.scope = scope
            self.spans = spans
        }
    }

    public struct Scope: Codable, Sendable, Equatable {
        public var name: String
        public var version: String?
        public init(name: String, version: String?) {
            self.name = name
            self.version = version
        }
    }

    /// One finished span.
    public struct Span: Codable, Sendable, Equatable {
        /// 32 hexadecimal digits.
        public var traceId: String
        /// 16 hexadecimal digits.
        public var spanId: String
        /// The parent's 16 hexadecimal digits; absent for a trace's root.
        public var parentSpanId: String?
        public var name: String
        /// ``Kind``'s number.
        public var kind: Int
        /// Nanoseconds since 1970, as a decimal string.
        public var startTimeUnixNano: String
        public var endTimeUnixNano: String
        public var attributes: [KeyValue]
        public var events: [Event]?
        public var status: Status?

        public init(traceId: String, spanId: String, parentSpanId: String?, name: String, kind: Kind,
                    startTimeUnixNano: UInt64, endTimeUnixNano: UInt64, attributes: [KeyValue], events: [Event]?, status: Status?) {
            self.traceId = traceId
            self.spanId = spanId
            self.parentSpanId = parentSpanId
            self.name = name
            self.kind = kind.rawValue
            self.startTimeUnixNano = String(startTimeUnixNano)
            self.endTimeUnixNano = String(endTimeUnixNano)
            self.attributes = attributes
            self.events = events
            self.status = status
        }

        /// The value of the attribute named `key`, if it has one.
        public func attribute(_ key: String) -> AnyValue? { attributes.first { $0.key == key }?.value }
    }

    /// `SpanKind`.
    public enum Kind: Int, Sendable {
        case `internal` = 1, server = 2, client = 3, producer = 4, consumer = 5
    }

    /// Something that happened during a span (an error recorded, say).
    public struct Event: Codable, Sendable, Equatable {
        public var timeUnixNano: String
        public var name: String
        public var attributes: [KeyValue]
        public init(timeUnixNano: UInt64, name: String, attributes: [KeyValue]) {
            self.timeUnixNano = String(timeUnixNano)
            self.name = name
            self.attributes = attributes
        }
    }

    /// `Status`: `code` 1 ok, 2 error (0, unset, is left out with the whole status).
    public struct Status: Codable, Sendable, Equatable {
        public var code: Int
        public var message: String?
        public init(code: Int, message: String?) {
            self.code = code
            self.message = message
        }
    }

    public struct KeyValue: Codable, Sendable, Equatable {
        public var key: String
        public var value: AnyValue
        public init(_ key: String, _ value: AnyValue) {
            self.key = key
            self.value = value
        }
    }

    /// `AnyValue`: exactly one of its fields is present.
    public struct AnyValue: Codable, Sendable, Equatable {
        public var stringValue: String?
        public var boolValue: Bool?
        /// A 64-bit integer, as a decimal string.
        public var intValue: String?
        public var doubleValue: Double?
        public var arrayValue: ArrayValue?

        public static func string(_ value: String) -> AnyValue { AnyValue(stringValue: value) }
        public static func bool(_ value: Bool) -> AnyValue { AnyValue(boolValue: value) }
        public static func int(_ value: Int64) -> AnyValue { AnyValue(intValue: String(value)) }
        public static func double(_ value: Double) -> AnyValue { AnyValue(doubleValue: value) }
        public static func array(_ values: [AnyValue]) -> AnyValue { AnyValue(arrayValue: ArrayValue(values: values)) }
    }

    public struct ArrayValue: Codable, Sendable, Equatable {
        public var values: [AnyValue]
    }
}
