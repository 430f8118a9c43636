import Foundation
import GatehouseHTTP
import GatehouseProtocol
import Hummingbird
import NIOCore

/// Reading of request bodies and queries with limits, content-type checks and clear errors.
enum RequestReading {
    /// The largest body an endpoint of the runtime protocol accepts.
    static let maxBodyBytes = 64 * 1024

    /// Decodes a JSON body of type `T`; 415 for another content type, 400 for bad JSON, 413 when too large.
    static func json<T: Decodable>(_ type: T.Type, from request: inout Request) async throws -> T {
        try requireContentType("application/json", request)
        let buffer = try await collect(&request)
        do {
            return try buffer.withUnsafeReadableBytes { try SharedJSONCoders.decode(type, from: $0) }
        } catch let error as DecodingError {
            throw GatehouseError.invalidRequest("The body is not valid: \(describe(error))")
        }
    }

    /// Parses a form body (`application/x-www-form-urlencoded`).
    /// The media type of form bodies.
    static let formType = "application/x-www-form-urlencoded"

    static func form(from request: inout Request) async throws -> [String: String] {
        try requireContentType(formType, request)
        let buffer = try await collect(&request)
        return parseForm(String(buffer: buffer))
    }

    /// The query parameters, percent-decoded.
    static func query(_ request: Request) -> [String: String] {
        parseForm(request.uri.query ?? "")
    }

    /// Parses `a=1&b=x%20y` (with `+` as space); the first value of a repeated name wins.
    static func parseForm(_ text: String) -> [String: String] {
        // Over the text's bytes in memory (`String.split` compares Characters, and even a split of its UTF-8 view
        // walks string indices: measurably slow for an introspection's 600-byte token).
        var text = text
        return text.withUTF8 { bytes in
            var result: [String: String] = [:]
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
                    let equals = pair.firstIndex(of: UInt8(ascii: "="))
                    let name = decodeComponent(equals.map { UnsafeBufferPointer(rebasing: pair[..<$0]) } ?? pair)
                    let value = equals.map { decodeComponent(UnsafeBufferPointer(rebasing: pair[($0 + 1)...])) } ?? ""
                    if result[name] == nil { result[name] = value }
                }
                start = end + 1
            }
            return result
        }
    }

    /// `+` as a space and `%XX` as its byte (form encoding); a component with a broken escape, or whose decoded
    /// bytes are not UTF-8, is kept as sent (with `+` as a space). Over bytes: Foundation's string functions on Linux
    /// cost more than the whole rest of a token request's parsing.
    static func decodeComponent(_ part: Substring) -> String {
        var part = String(part)
        return part.withUTF8 { decodeComponent($0) }
    }

    /// ``decodeComponent(_:)`` over the UTF-8 bytes of a whole component (cut from valid text at ASCII separators).
    private static func decodeComponent(_ part: UnsafeBufferPointer<UInt8>) -> String {
        // Most components (a token, a grant type) have nothing to decode.
        guard part.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else {
            return String(decoding: part, as: UTF8.self)
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(part.count)
        var escaped = false   // else nothing to validate: the bytes are the text's own
        var intact = true
        var index = 0
        while index < part.count, intact {
            let byte = part[index]
            index += 1
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                escaped = true
                guard index + 1 < part.count, let high = hexValue(part[index]), let low = hexValue(part[index + 1]) else {
                    intact = false
                    break
                }
                index += 2
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard escaped else { return String(decoding: bytes, as: UTF8.self) }
        guard intact, let text = String(validating: bytes, as: UTF8.self) else {
            return String(decoding: part.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func requireContentType(_ expected: String, _ request: Request) throws {
        let given = request.headers.value(of: .contentType) ?? ""
        guard mediaType(of: given, is: expected) else {
            throw GatehouseError(
                .unsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
                "Content-Type must be \(expected), not '\(given.lowercased().prefix(80))'.")
        }
    }

    /// Whether the media type of a `Content-Type` value (before any `;`, blanks around it ignored, case-insensitive)
    /// is `expected`. Over bytes (``HeaderText``): Foundation's lowercasing and trimming cost a token request more
    /// than its form parsing.
    static func mediaType(of value: String, is expected: String) -> Bool {
        let media = value.utf8.firstIndex(of: UInt8(ascii: ";")).map { value[..<$0] } ?? value[...]
        return HeaderText.equalsIgnoringCase(HeaderText.trimmed(media), expected)
    }

    private static func collect(_ request: inout Request) async throws -> ByteBuffer {
        try await body(of: &request, upTo: maxBodyBytes, tooLarge: "The body is larger than \(maxBodyBytes) bytes.")
    }

    /// The whole body, up to `limit` bytes: 413 (with `tooLarge`) when it is larger, 400 when the client's body
    /// cannot be read (it ends before its `Content-Length`, its chunks are malformed, the connection closed).
    static func body(of request: inout Request, upTo limit: Int, tooLarge: String) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw GatehouseError(.contentTooLarge, "REQUEST_TOO_LARGE", tooLarge)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw GatehouseError(.badRequest, "INVALID_REQUEST", "The body could not be read: it is malformed or incomplete.")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "" : " at '\(p)'"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)'\(path(context))"
        case .typeMismatch(_, let context): return "wrong type\(path(context))"
        case .valueNotFound(_, let context): return "missing value\(path(context))"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not JSON" : "invalid value\(path(context))"
        @unknown default: return "invalid"
        }
    }
}
