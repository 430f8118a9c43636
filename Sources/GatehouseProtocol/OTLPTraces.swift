/// OpenTelemetry's OTLP/HTTP trace export in its JSON encoding (`POST /v1/traces`,
/// `Content-Type: application/json`; opentelemetry-proto `ExportTraceServiceRequest`): what `gatehouse serve` and
/// `gatehouse gateway` send to a collector when tracing is on. As OTLP's JSON mapping asks: trace and span ids in
/// lower-case hexadecimal (not base64), 64-bit integers as decimal strings, enumerations as their numbers, field names
/// in lowerCamelCase; absent optional fields left out.
package enum OTLPTraces {
    /// The path a collector receives traces on.
    package static let path = "/v1/traces"

    /// The body of one export.
    package struct ExportRequest: Codable, Sendable, Equatable {
        package var resourceSpans: [ResourceSpans]
        package init(resourceSpans: [ResourceSpans]) { self.resourceSpans = resourceSpans }
    }

    /// The spans of one process (`service.name` and the like in its resource).
    package struct ResourceSpans: Codable, Sendable, Equatable {
        package var resource: Resource
        package var scopeSpans: [ScopeSpans]
        package init(resource: Resource, scopeSpans: [ScopeSpans]) {
            self.resource = resource
            self.scopeSpans = scopeSpans
        }
    }

    package struct Resource: Codable, Sendable, Equatable {
        package var attributes: [KeyValue]
        package init(attributes: [KeyValue]) { self.attributes = attributes }
    }

    /// The spans made by one instrumentation scope (Gatehouse's).
    package struct ScopeSpans: Codable, Sendable, Equatable {
        package var scope: Scope
        package var spans: [Span]
        package init(scope: Scope, spans: [Span]) {
            self.scope = scope
            self.spans = spans
        }
    }

    package struct Scope: Codable, Sendable, Equatable {
        package var name: String
        package var version: String?
        package init(name: String, version: String?) {
            self.name = name
            self.version = version
        }
    }

    /// One finished span.
    package struct Span: Codable, Sendable, Equatable {
        /// 32 hexadecimal digits.
        package var traceId: String
        /// 16 hexadecimal digits.
        package var spanId: String
        /// The parent's 16 hexadecimal digits; absent for a trace's root.
        package var parentSpanId: String?
        package var name: String
        /// ``Kind``'s number.
        package var kind: Int
        /// Nanoseconds since 1970, as a decimal string.
        package var startTimeUnixNano: String
        package var endTimeUnixNano: String
        package var attributes: [KeyValue]
        package var events: [Event]?
        package var status: Status?

        package init(traceId: String, spanId: String, parentSpanId: String?, name: String, kind: Kind,
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
        package func attribute(_ key: String) -> AnyValue? { attributes.first { $0.key == key }?.value }
    }

    /// `SpanKind`.
    package enum Kind: Int, Sendable {
        case `internal` = 1, server = 2, client = 3, producer = 4, consumer = 5
    }

    /// Something that happened during a span (an error recorded, say).
    package struct Event: Codable, Sendable, Equatable {
        package var timeUnixNano: String
        package var name: String
        package var attributes: [KeyValue]
        package init(timeUnixNano: UInt64, name: String, attributes: [KeyValue]) {
            self.timeUnixNano = String(timeUnixNano)
            self.name = name
            self.attributes = attributes
        }
    }

    /// `Status`: `code` 1 ok, 2 error (0, unset, is left out with the whole status).
    package struct Status: Codable, Sendable, Equatable {
        package var code: Int
        package var message: String?
        package init(code: Int, message: String?) {
            self.code = code
            self.message = message
        }
    }

    package struct KeyValue: Codable, Sendable, Equatable {
        package var key: String
        package var value: AnyValue
        package init(_ key: String, _ value: AnyValue) {
            self.key = key
            self.value = value
        }
    }

    /// `AnyValue`: exactly one of its fields is present.
    package struct AnyValue: Codable, Sendable, Equatable {
        package var stringValue: String?
        package var boolValue: Bool?
        /// A 64-bit integer, as a decimal string.
        package var intValue: String?
        package var doubleValue: Double?
        package var arrayValue: ArrayValue?

        package static func string(_ value: String) -> AnyValue { AnyValue(stringValue: value) }
        package static func bool(_ value: Bool) -> AnyValue { AnyValue(boolValue: value) }
        package static func int(_ value: Int64) -> AnyValue { AnyValue(intValue: String(value)) }
        package static func double(_ value: Double) -> AnyValue { AnyValue(doubleValue: value) }
        package static func array(_ values: [AnyValue]) -> AnyValue { AnyValue(arrayValue: ArrayValue(values: values)) }
    }

    package struct ArrayValue: Codable, Sendable, Equatable {
        package var values: [AnyValue]
    }
}
