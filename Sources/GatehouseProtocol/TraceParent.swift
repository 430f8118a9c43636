/// A W3C Trace Context `traceparent` field (<https://www.w3.org/TR/trace-context/>, level 1): the trace a request
/// belongs to, the span that sent it, and whether that trace is sampled. Gatehouse reads it from trusted callers and
/// sends it to the gateway's upstreams; its tracer (``OTLPTraces``) records spans under it.
package struct TraceParent: Sendable, Hashable {
    /// The request field that carries it.
    package static let field = "traceparent"

    /// The high and low halves of the trace id (never both zero).
    package let traceHigh: UInt64, traceLow: UInt64
    /// The sending span's 8 bytes (never zero).
    package let spanID: UInt64
    /// Whether the caller records this trace (flag `01`).
    package let sampled: Bool

    /// A trace parent; `nil` for the all-zero ids the specification forbids.
    package init?(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, sampled: Bool) {
        guard traceHigh | traceLow != 0, spanID != 0 else { return nil }
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.sampled = sampled
    }

    /// Reads a `traceparent` value: `nil` when it is not one (wrong length, upper-case or other characters, version
    /// `ff`, zero ids). A version above `00` is read by its first four parts, as the specification asks.
    package init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
              let version = Self.hex(bytes[0..<2]), version != 0xff,
              version == 0 ? bytes.count == 55 : (bytes.count == 55 || bytes[55] == UInt8(ascii: "-")),
              let high = Self.hex(bytes[3..<19]), let low = Self.hex(bytes[19..<35]),
              let span = Self.hex(bytes[36..<52]), let flags = Self.hex(bytes[53..<55])
        else { return nil }
        self.init(traceHigh: high, traceLow: low, spanID: span, sampled: flags & 1 == 1)
    }

    /// The field's value, version `00`.
    package var text: String {
        "00-\(Self.hex(traceHigh, digits: 16))\(Self.hex(traceLow, digits: 16))-\(Self.hex(spanID, digits: 16))-\(sampled ? "01" : "00")"
    }

    /// The trace id as OTLP's JSON writes it: 32 lower-case hexadecimal digits.
    package var traceIDHex: String { Self.hex(traceHigh, digits: 16) + Self.hex(traceLow, digits: 16) }
    /// The span id as OTLP's JSON writes it: 16 lower-case hexadecimal digits.
    package var spanIDHex: String { Self.hex(spanID, digits: 16) }

    /// `value` in `digits` lower-case hexadecimal digits.
    package static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Lower-case hexadecimal digits (at most 16) as a number; `nil` for any other character.
    static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}
