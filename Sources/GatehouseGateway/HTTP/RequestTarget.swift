/// A request's target (RFC 9112 §3.2.1, origin-form `/path?query`), checked and normalised once, before anything
/// routes on it or forwards it.
///
/// The gateway routes on ``segments`` and forwards exactly ``path`` (appended to the upstream's base path) with
/// ``query``, so the path a stricter service or realm is matched against is the path the upstream gets:
///
/// - every byte must be allowed in a URI (RFC 3986); `[ ] { } | ^` and the backtick (U+0060) sent raw are percent-encoded; a
///   space, `"`, `<`, `>`, `\`, a control character or a non-ASCII byte is refused, and so is a fragment (`#`);
/// - a `%` must start a well-formed escape (`%` + two hex digits); escapes of unreserved characters are decoded
///   (`/ech%6F` is `/echo`), the others are kept with upper-case hex digits (RFC 3986 §6.2.2);
/// - an encoded `/` or `\` (`%2F`, `%5C`) or an encoded control character in the path is refused: an upstream that
///   decodes before routing would see segments the gateway did not route on;
/// - dot segments (`.`, `..`, also `%2e%2E`) are resolved; one that would climb above the root is refused, and so
///   is a dot segment with parameters (`..;x`, which some servers read as `..`);
/// - empty segments (`//`) are collapsed; a trailing `/` is kept;
/// - the query is kept as sent (raw `[ ] { } | ^ \` and the backtick percent-encoded) when every escape in it is
///   well formed.
///
/// Targets longer than ``maxLength`` bytes are refused with `414`.
public struct RequestTarget: Sendable, Equatable, CustomStringConvertible {
    /// The path's segments, normalised: none is empty, `.` or `..`, each in the canonical percent-encoding.
    public let segments: [String]
    /// Whether the path ends with `/` (only when there is at least one segment).
    public let trailingSlash: Bool
    /// The query without its `?`, as sent (see above); `nil` when absent or empty.
    public let query: String?

    /// The longest target accepted, in bytes.
    public static let maxLength = 8 * 1024

    /// The normalised path: `/` followed by the segments, with the trailing `/` if any.
    public var path: String {
        segments.isEmpty ? "/" : "/" + segments.joined(separator: "/") + (trailingSlash ? "/" : "")
    }

    /// The path and the query, as forwarded.
    public var description: String { query.map { path + "?" + $0 } ?? path }

    /// Parses a request target such as `/echo/a%20b?x=1`.
    public init(parsing target: String) throws(RequestTargetError) {
        let bytes = Array(target.utf8)
        guard bytes.count <= Self.maxLength else {
            throw RequestTargetError(status: 414, "the request target is longer than \(Self.maxLength) bytes")
        }
        guard bytes.first == UInt8(ascii: "/") else {
            throw RequestTargetError("the request target must be an absolute path")
        }
        if bytes.contains(UInt8(ascii: "#")) { throw RequestTargetError("a request target has no fragment") }
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        (segments, trailingSlash) = try Self.normalisedSegments(bytes[..<pathEnd])
        if pathEnd < bytes.endIndex {
            let raw = try Self.canonicalQuery(bytes[(pathEnd + 1)...])
            query = raw.isEmpty ? nil : raw
        } else {
            query = nil
        }
    }

    /// A target already normalised: `segments` must come from another target (routing prefixes are parsed too).
    init(segments: [String], trailingSlash: Bool, query: String?) {
        self.segments = segments
        self.trailingSlash = trailingSlash && !segments.isEmpty
        self.query = query
    }

    /// The same target with another query.
    func with(query: String?) -> RequestTarget {
        RequestTarget(segments: segments, trailingSlash: trailingSlash, query: (query?.isEmpty ?? true) ? nil : query)
    }

    // MARK: Path

    private static func normalisedSegments(_ path: ArraySlice<UInt8>) throws(RequestTargetError) -> ([String], Bool) {
        var output: [String] = []
        var trailingSlash = false
        // The first byte is "/": the raw segments are the pieces after each "/".
        let pieces = path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, piece) in pieces.enumerated() {
            let isLast = index == pieces.count - 1
            let segment = try canonicalSegment(piece)
            switch segment {
            case "":
                trailingSlash = isLast
            case ".":
                trailingSlash = isLast
            case "..":
                guard !output.isEmpty else { throw RequestTargetError("the path climbs above the root") }
                output.removeLast()
                trailingSlash = isLast
            default:
                if isDotSegmentWithParameters(segment) {
                    throw RequestTargetError("a dot segment with parameters in the path")
                }
                output.append(segment)
                trailingSlash = false
            }
        }
        return (output, trailingSlash && !output.isEmpty)
    }

    /// `.;x`, `..;x`, also with `;` encoded: some servers drop the parameters and then read a dot segment.
    private static func isDotSegmentWithParameters(_ segment: String) -> Bool {
        guard segment.utf8.first == UInt8(ascii: ".") else { return false }
        for dots in [".", ".."] {
            if segment.hasPrefix(dots + ";") || segment.hasPrefix(dots + "%3B") { return true }
        }
        return false
    }

    private static func canonicalSegment(_ bytes: ArraySlice<UInt8>) throws(RequestTargetError) -> String {
        try canonical(bytes, escaped: { decoded, _, output throws(RequestTargetError) in
            if URIBytes.isUnreserved(decoded) {
                output.append(decoded)
            } else if decoded == UInt8(ascii: "/") || decoded == UInt8(ascii: "\\") {
                throw RequestTargetError("an encoded / or \\ in the path")
            } else if decoded < 0x20 || decoded == 0x7F {
                throw RequestTargetError("an encoded control character in the path")
            } else {
                URIBytes.appendEscaped(decoded, to: &output)
            }
        }, literal: { byte, output throws(RequestTargetError) in
            if URIBytes.isPathCharacter(byte) {
                output.append(byte)
            } else if URIBytes.isTolerated(byte) && byte != UInt8(ascii: "\\") {
                URIBytes.appendEscaped(byte, to: &output)
            } else {
                throw refusal(byte)
            }
        })
    }

    // MARK: Query

    private static func canonicalQuery(_ bytes: ArraySlice<UInt8>) throws(RequestTargetError) -> String {
        try canonical(bytes, escaped: { _, raw, output in
            output.append(contentsOf: raw)   // kept as sent: the upstream decodes its own query
        }, literal: { byte, output throws(RequestTargetError) in
            if URIBytes.isPathCharacter(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                output.append(byte)
            } else if URIBytes.isTolerated(byte) {
                URIBytes.appendEscaped(byte, to: &output)
            } else {
                throw refusal(byte)
            }
        })
    }

    /// The one scan of a path segment or a query: every `%XX` is checked and handed to `escaped` (its byte and its
    /// three characters), every other byte to `literal`; both append to the canonical output or refuse.
    private static func canonical(
        _ bytes: ArraySlice<UInt8>,
        escaped: (_ decoded: UInt8, _ raw: ArraySlice<UInt8>, _ output: inout [UInt8]) throws(RequestTargetError) -> Void,
        literal: (_ byte: UInt8, _ output: inout [UInt8]) throws(RequestTargetError) -> Void
    ) throws(RequestTargetError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%") {
                try escaped(try escape(bytes, at: index), bytes[index..<(index + 3)], &output)
                index += 3
            } else {
                try literal(bytes[index], &output)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Bytes

    /// The byte a `%` at `index` encodes.
    private static func escape(_ bytes: ArraySlice<UInt8>, at index: Int) throws(RequestTargetError) -> UInt8 {
        guard index + 2 < bytes.endIndex,
              let high = URIBytes.hexValue(bytes[index + 1]), let low = URIBytes.hexValue(bytes[index + 2])
        else {
            throw RequestTargetError("an invalid percent-encoding in the request target")
        }
        return high << 4 | low
    }

    private static func refusal(_ byte: UInt8) -> RequestTargetError {
        if byte >= 0x80 { return RequestTargetError("a non-ASCII byte in the request target") }
        if byte < 0x20 || byte == 0x7F { return RequestTargetError("a control character in the request target") }
        return RequestTargetError("a character not allowed in a request target")
    }
}

/// Why a request target was refused, with the status to answer: `400`, or `414` for an overlong one.
public struct RequestTargetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `400` or `414`.
    public let status: Int
    /// What is wrong, for the `error_description` of the answer (never quotes the target).
    public let description: String

    init(status: Int = 400, _ description: String) {
        self.status = status
        self.description = description
    }
}
