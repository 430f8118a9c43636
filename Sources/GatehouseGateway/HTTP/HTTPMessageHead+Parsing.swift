// The head parsed in place: `HTTPMessageHead.parse` and the rules of its start line, fields and framing (the type,
// its errors and its byte classes are in HTTPMessageHead.swift).

extension HTTPMessageHead {
    /// What kind of head to read, with what framing rules.
    enum Kind {
        case request
        /// A response to a request whose method was `HEAD` or not (a `HEAD`'s response has no body).
        case response(toHEAD: Bool)
    }

    /// The head at the start of `bytes`: `nil` while its empty last line has not arrived (and the bytes are within
    /// `maxLength`).
    static func parse(_ bytes: UnsafeRawBufferPointer, kind: Kind, maxLength: Int = defaultMaxLength,
                      maxLineLength: Int = HTTPMessageHead.maxLineLength, maxFields: Int = defaultMaxFields) throws(HTTPHeadError) -> HTTPMessageHead? {
        var reader = LineReader(bytes: bytes, limit: min(bytes.count, maxLength), maxLineLength: maxLineLength)
        guard let first = try reader.nextLine() else { return try reader.incomplete(maxLength: maxLength, available: bytes.count) }
        var head: HTTPMessageHead
        switch kind {
        case .request: head = try requestLine(bytes, first)
        case .response: head = try statusLine(bytes, first)
        }
        head.fields.reserveCapacity(16)
        var contentLength: Int?
        var transferEncoding: Range<Int>?
        while true {
            guard let line = try reader.nextLine() else { return try reader.incomplete(maxLength: maxLength, available: bytes.count) }
            if line.isEmpty { break }
            guard head.fields.count < maxFields else { throw HTTPHeadError("more than \(maxFields) header fields", tooLarge: true) }
            let field = try Self.field(bytes, line)
            let framingField = Self.name(bytes, field.name, is: "content-length") || Self.name(bytes, field.name, is: "transfer-encoding")
            // NIO's decoder refuses whitespace after a framing field's value.
            if framingField, field.value.upperBound != line.upperBound { throw HTTPHeadError("whitespace after a framing field's value") }
            if Self.name(bytes, field.name, is: "content-length") {
                guard contentLength == nil else { throw HTTPHeadError("more than one Content-Length") }
                contentLength = try Self.decimal(bytes, field.value)
            } else if Self.name(bytes, field.name, is: "transfer-encoding") {
                guard transferEncoding == nil else { throw HTTPHeadError("more than one Transfer-Encoding") }
                transferEncoding = field.value
            }
            head.fields.append(field)
        }
        head.length = reader.offset
        head.contentLength = contentLength
        head.framing = try framing(bytes, kind: kind, head: head, contentLength: contentLength, transferEncoding: transferEncoding)
        return head
    }

    // MARK: Start lines

    private static func requestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPHeadError) -> HTTPMessageHead {
        var index = line.lowerBound
        while index < line.upperBound, isTokenCharacter(bytes[index]) { index += 1 }
        let method = line.lowerBound..<index
        guard !method.isEmpty, index < line.upperBound, bytes[index] == UInt8(ascii: " ") else {
            throw HTTPHeadError("a malformed request line")
        }
        guard knownMethods.contains(where: { name(bytes, method, isExactly: $0) }) else { throw HTTPHeadError("an unknown method") }
        index += 1
        let targetStart = index
        while index < line.upperBound, bytes[index] > 0x20, bytes[index] < 0x7F { index += 1 }
        let target = targetStart..<index
        guard !target.isEmpty, index < line.upperBound, bytes[index] == UInt8(ascii: " ") else {
            throw HTTPHeadError("a malformed request line")
        }
        // Origin form only (`/path?query`): the gateway routes no other (RFC 9112 §3.2).
        guard bytes[targetStart] == UInt8(ascii: "/") else { throw HTTPHeadError("a request target not in origin form") }
        index += 1
        guard line.upperBound - index == 8, let minor = version(bytes, at: index) else { throw HTTPHeadError("not HTTP/1.0 or HTTP/1.1") }
        return HTTPMessageHead(length: 0, startLine: .request(method: method, target: target), minorVersion: minor, fields: [], framing: .none,
                               contentLength: nil)
    }

    private static func statusLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPHeadError) -> HTTPMessageHead {
        let start = line.lowerBound
        guard line.count >= 12, let minor = version(bytes, at: start), bytes[start + 8] == UInt8(ascii: " ") else {
            throw HTTPHeadError("a malformed status line")
        }
        var status = 0
        for index in (start + 9)..<(start + 12) {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw HTTPHeadError("a malformed status code") }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard status >= 100 else { throw HTTPHeadError("a malformed status code") }
        if line.count > 12 {
            guard bytes[start + 12] == UInt8(ascii: " ") else { throw HTTPHeadError("a malformed status line") }
            for index in (start + 13)..<line.upperBound where !isFieldValueCharacter(bytes[index]) {
                throw HTTPHeadError("a control character in the reason phrase")
            }
        }
        return HTTPMessageHead(length: 0, startLine: .response(status: status), minorVersion: minor, fields: [], framing: .none,
                               contentLength: nil)
    }

    /// The minor version of `HTTP/1.0` or `HTTP/1.1` at `index`.
    private static func version(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        let prefix: StaticString = "HTTP/1."
        for offset in 0..<7 where bytes[index + offset] != prefix.utf8Start[offset] { return nil }
        switch bytes[index + 7] {
        case UInt8(ascii: "0"): return 0
        case UInt8(ascii: "1"): return 1
        default: return nil
        }
    }

    // MARK: Fields

    private static func field(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPHeadError) -> Field {
        var index = line.lowerBound
        while index < line.upperBound, isTokenCharacter(bytes[index]) { index += 1 }
        let name = line.lowerBound..<index
        guard index < line.upperBound, bytes[index] == UInt8(ascii: ":") else {
            // A folded line starts with whitespace; whitespace before the colon is refused too (RFC 9112 §5.1).
            throw HTTPHeadError(name.isEmpty ? "a malformed header line" : "a malformed header field name")
        }
        guard !name.isEmpty else { throw HTTPHeadError("an empty header field name") }
        index += 1
        while index < line.upperBound, isBlank(bytes[index]) { index += 1 }
        var end = line.upperBound
        while end > index, isBlank(bytes[end - 1]) { end -= 1 }
        for position in index..<end where !isFieldValueCharacter(bytes[position]) {
            throw HTTPHeadError("a control character in a header field value")
        }
        return Field(name: name, value: index..<end)
    }

    private static func decimal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws(HTTPHeadError) -> Int {
        guard !range.isEmpty, range.count <= 15 else { throw HTTPHeadError("an invalid Content-Length") }
        var value = 0
        for index in range {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw HTTPHeadError("an invalid Content-Length") }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    // MARK: Framing (RFC 9112 §6.3)

    private static func framing(_ bytes: UnsafeRawBufferPointer, kind: Kind, head: HTTPMessageHead, contentLength: Int?,
                                transferEncoding: Range<Int>?) throws(HTTPHeadError) -> Framing {
        // The fields' rules hold even where the status or the method means no body.
        if let transferEncoding {
            guard contentLength == nil else { throw HTTPHeadError("both Transfer-Encoding and Content-Length") }
            guard head.minorVersion == 1 else { throw HTTPHeadError("Transfer-Encoding in HTTP/1.0") }
            guard name(bytes, transferEncoding, is: "chunked") else { throw HTTPHeadError("a Transfer-Encoding other than chunked") }
        }
        if case .response(let toHEAD) = kind, case .response(let status) = head.startLine,
           toHEAD || status < 200 || status == 204 || status == 304 {
            return .none
        }
        if transferEncoding != nil { return .chunked }
        if let contentLength { return contentLength == 0 ? .none : .length(contentLength) }
        if case .response = kind { return .untilClose }
        return .none
    }
}

/// The CRLF-ended lines of a head, read from the start of its bytes.
private struct LineReader {
    let bytes: UnsafeRawBufferPointer
    /// Lines are looked for below this offset.
    let limit: Int
    let maxLineLength: Int
    /// Where the next line starts.
    private(set) var offset = 0

    init(bytes: UnsafeRawBufferPointer, limit: Int, maxLineLength: Int) {
        self.bytes = bytes
        self.limit = limit
        self.maxLineLength = maxLineLength
    }

    /// The next line without its CRLF, `nil` when it has not all arrived within the limit.
    mutating func nextLine() throws(HTTPHeadError) -> Range<Int>? {
        var index = offset
        while index < limit {
            switch bytes[index] {
            case 0x0D:
                guard index + 1 < limit else { return nil }
                guard bytes[index + 1] == 0x0A else { throw HTTPHeadError("a CR without LF in the head") }
                let line = offset..<index
                guard line.count <= maxLineLength else {
                    throw HTTPHeadError("a line of the head is longer than \(maxLineLength) bytes", tooLarge: true)
                }
                offset = index + 2
                return line
            case 0x0A:
                throw HTTPHeadError("an LF without CR in the head")
            case 0x00:
                throw HTTPHeadError("a NUL byte in the head")
            default:
                index += 1
            }
        }
        return nil
    }

    /// `nil` (wait for more) while the head may still fit; refused once the bytes reach `maxLength` without it.
    func incomplete(maxLength: Int, available: Int) throws(HTTPHeadError) -> HTTPMessageHead? {
        if available >= maxLength { throw HTTPHeadError("the head is longer than \(maxLength) bytes", tooLarge: true) }
        return nil
    }
}
