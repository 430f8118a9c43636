/// KAAZING's extended WebSocket handshake, as KAAZING Gateway 5 and its clients speak it (the JavaScript client's
/// `WebSocketNativeHandshakeHandler` and `WebSocketNativeBalancingHandler`; the gateway's `WsnAcceptor` and the wire
/// scripts under `transport/wsn/src/test/scripts/.../auth/`). A browser never shows a script the status of a refused
/// upgrade, so KAAZING's clients move the HTTP challenge inside the WebSocket:
///
/// 1. the client upgrades `GET <path>?.kl=Y` asking for the sub-protocol ``protocolName`` (and its own after it);
///    the gateway answers `101` selecting ``protocolName`` and sends the balancer frame ``noRedirect``;
/// 2. the client sends an HTTP request in one message: `GET <path> HTTP/1.1`, its `Sec-WebSocket-Protocol` (the
///    application's protocols), `Sec-WebSocket-Extensions`, and `Authorization` once it answers a challenge;
/// 3. the gateway answers with an HTTP response in one binary frame, then an empty binary frame that ends it:
///    `401` with `WWW-Authenticate` (the client answers with a new request on the same socket), `403` or another
///    status (the client fails the connection), or `101` followed by ``noRedirect`` again, after which the
///    WebSocket is the application's.
///
/// Shared by the gateway and the SDK's WebSocket clients.
package enum KaazingHandshake {
    /// The sub-protocol that asks for the extended handshake.
    package static let protocolName = "x-kaazing-handshake"
    /// The query parameter KAAZING's native clients add to the upgrade's target (`.kl=Y`): never the upstream's.
    package static let libraryParameter = ".kl"
    /// The balancer's "no redirect" frame: U+F0FF then `N`, UTF-8, in a binary frame.
    package static let noRedirect: [UInt8] = [0xEF, 0x83, 0xBF, 0x4E]
    /// The status line's reason of a `101` inside the handshake, as KAAZING writes it.
    package static let switchingReason = "Web Socket Protocol Handshake"
    /// The largest request or response carried inside the handshake.
    package static let maximumSize = 16 * 1024

    /// Whether `Sec-WebSocket-Protocol` field values (each a comma-separated list) ask for the extended handshake.
    package static func isRequested(byProtocolFields values: [String]) -> Bool {
        values.contains { value in protocols(in: value).contains(protocolName) }
    }

    /// The protocols of a comma-separated `Sec-WebSocket-Protocol` value, trimmed, empty ones left out.
    package static func protocols(in value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingASCIISpaces() }.filter { !$0.isEmpty }
    }

    /// Why a message is not a handshake request or response.
    package struct FormatError: Error, Equatable, CustomStringConvertible, Sendable {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The client's request inside the handshake: a request line and header fields, no body.
    package struct Request: Equatable, Sendable {
        package var method: String
        package var target: String
        /// The fields in order, names as sent.
        package var fields: [(name: String, value: String)]

        package init(method: String = "GET", target: String, fields: [(name: String, value: String)] = []) {
            self.method = method
            self.target = target
            self.fields = fields
        }

        package static func == (lhs: Request, rhs: Request) -> Bool {
            lhs.method == rhs.method && lhs.target == rhs.target && lhs.fields.elementsEqual(rhs.fields) { $0 == $1 }
        }

        /// The value of the first field named `name` (any case).
        package func value(of name: String) -> String? {
            fields.first { KaazingHandshake.equalsIgnoringCase($0.name, name) }?.value
        }

        /// Reads a request as the client sends it: `GET <target> HTTP/1.1`, fields, an empty line, nothing after.
        /// Strict as RFC 9112 asks of a request head (CRLF line ends, token names, no control characters in values).
        package init(parsing bytes: some Collection<UInt8>) throws(FormatError) {
            guard bytes.count <= KaazingHandshake.maximumSize else { throw FormatError("the handshake request is over \(KaazingHandshake.maximumSize) bytes") }
            var lines = try KaazingHandshake.lines(of: Array(bytes))
            let requestLine = lines.removeFirst()
            let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2] == "HTTP/1.1", !parts[0].isEmpty, parts[0].allSatisfy(KaazingHandshake.isTokenCharacter),
                  parts[1].first == "/", !parts[1].contains(where: { $0.asciiValue.map { $0 <= 0x20 || $0 == 0x7F } ?? false })
            else { throw FormatError("the handshake request's first line is not 'GET /path HTTP/1.1'") }
            method = String(parts[0])
            target = String(parts[1])
            fields = try KaazingHandshake.fields(of: lines)
        }

        /// The request's bytes, as a client sends them.
        package var encoded: [UInt8] {
            var text = "\(method) \(target) HTTP/1.1\r\n"
            for field in fields { text += "\(field.name): \(field.value)\r\n" }
            return Array((text + "\r\n").utf8)
        }
    }

    /// The gateway's answer inside the handshake.
    package struct Response: Equatable, Sendable {
        package var status: Int
        package var reason: String
        package var fields: [(name: String, value: String)]
        package var body: [UInt8]

        package init(status: Int, reason: String, fields: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.reason = reason
            self.fields = fields
            self.body = body
        }

        package static func == (lhs: Response, rhs: Response) -> Bool {
            lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.body == rhs.body && lhs.fields.elementsEqual(rhs.fields) { $0 == $1 }
        }

        /// The value of the first field named `name` (any case).
        package func value(of name: String) -> String? {
            fields.first { KaazingHandshake.equalsIgnoringCase($0.name, name) }?.value
        }

        /// The answer's bytes: status line, fields, `Content-Length` when there is a body, the body.
        package var encoded: [UInt8] {
            var text = "HTTP/1.1 \(status) \(reason)\r\n"
            for field in fields { text += "\(field.name): \(field.value)\r\n" }
            if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
            return Array((text + "\r\n").utf8) + body
        }

        /// Reads an answer as the gateway sends it (for clients): the status line, the fields, the body by its
        /// `Content-Length` (or what follows the head).
        package init(parsing bytes: some Collection<UInt8>) throws(FormatError) {
            let all = Array(bytes)
            guard all.count <= KaazingHandshake.maximumSize else { throw FormatError("the handshake answer is over \(KaazingHandshake.maximumSize) bytes") }
            guard let end = KaazingHandshake.headEnd(in: all) else { throw FormatError("the handshake answer has no end of head") }
            var lines = try KaazingHandshake.lines(of: Array(all[..<end]))
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0] == "HTTP/1.1", parts[1].count == 3, let code = Int(parts[1]) else {
                throw FormatError("the handshake answer's first line is not 'HTTP/1.1 <status> <reason>'")
            }
            status = code
            reason = parts.count == 3 ? String(parts[2]) : ""
            fields = try KaazingHandshake.fields(of: lines)
            body = Array(all[end...])
        }
    }

    // MARK: Reading

    /// The index just past the empty line ending a head, if there is one.
    static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// The head's lines without their CRLF: at least the first one, the empty last line required and removed.
    private static func lines(of bytes: [UInt8]) throws(FormatError) -> [String] {
        guard bytes.count >= 4, bytes.suffix(4).elementsEqual([13, 10, 13, 10]) else { throw FormatError("the handshake message does not end its head with an empty line") }
        var lines: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count - 2 {
            if bytes[index] == 13 {
                guard bytes[index + 1] == 10 else { throw FormatError("a bare CR in the handshake message") }
                guard let line = String(utf8Validating: bytes[start..<index]) else { throw FormatError("the handshake message is not UTF-8") }
                lines.append(line)
                index += 2
                start = index
            } else if bytes[index] == 10 || bytes[index] == 0 {
                throw FormatError(bytes[index] == 10 ? "a bare LF in the handshake message" : "a NUL in the handshake message")
            } else {
                index += 1
            }
        }
        guard start == bytes.count - 2, let first = lines.first, !first.isEmpty else { throw FormatError("the handshake message has no first line") }
        return lines
    }

    private static func fields(of lines: some Collection<String>) throws(FormatError) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw FormatError("a handshake field without a colon") }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { throw FormatError("a handshake field's name is not a token") }
            let value = line[line.index(after: colon)...].trimmingASCIISpaces()
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
                throw FormatError("a control character in a handshake field's value")
            }
            fields.append((String(name), value))
        }
        return fields
    }

    /// RFC 9110's `tchar`.
    static func isTokenCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return false }
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
        }
    }

    static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && zip(lhs.utf8, rhs.utf8).allSatisfy { a, b in
            (a | (a >= 65 && a <= 90 ? 0x20 : 0)) == (b | (b >= 65 && b <= 90 ? 0x20 : 0))
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingASCIISpaces() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
