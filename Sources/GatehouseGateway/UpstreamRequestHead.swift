import GatehouseHTTP
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The head of a request as the gateway sends it upstream, and of an upstream's answer as it goes back to the
/// client, for the event-loop relay (``GatewayHTTPHandler``); the same rules as ``HTTPProxy``.
enum UpstreamRequestHead {
    /// The client's header fields as `HTTPFields`, for the realm's credentials and ``ForwardingHeaders`` (fields
    /// whose name is not a valid token are left out: NIO's parser lets none through).
    static func fields(_ headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }

    /// Only the fields admission and ``ForwardingHeaders`` read — `Authorization`, `Cookie`, `Host`, the realm's
    /// credential headers and the forwarding family — as `HTTPFields`: the rest of a request's fields are copied
    /// once, into the upstream head, not twice.
    static func admissionFields(_ headers: HTTPHeaders, realm: Realm?) -> HTTPFields {
        let credentialHeaders = realm?.headers ?? []
        var fields = HTTPFields()
        fields.reserveCapacity(4)
        for (name, value) in headers {
            switch FieldKind(name) {
            case .authorization, .cookie, .host, .forwarding:
                break
            default:
                guard !credentialHeaders.isEmpty, credentialHeaders.contains(where: { HeaderText.equalsIgnoringCase($0, name) }) else { continue }
            }
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }

    /// The request's `Authorization`, its fields joined with `, ` as ``HTTPFields/value(of:)`` joins them.
    static func authorization(_ headers: HTTPHeaders) -> String? {
        var value: String?
        for (name, field) in headers where FieldKind(name) == .authorization {
            value = value.map { $0 + ", " + field } ?? field
        }
        return value
    }

    /// What a client's field is to the relay, told from its name's bytes (ASCII case ignored) without making a
    /// lower-cased copy of it: this runs for every field of every request.
    enum FieldKind: Equatable {
        case host, cookie, authorization, contentLength, transferEncoding, gatewayUser, forwarding
        /// `Connection`, `Keep-Alive`, `TE`, `Trailer`, `Upgrade`, `Proxy-*` (``HTTPProxy/hopByHop`` but `Host`).
        case hopByHop
        case other

        init(_ name: String) {
            var copy = name
            self = copy.withUTF8 { Self(UnsafeRawBufferPointer($0), 0..<$0.count) }
        }

        /// The kind of the field named at `range` of `raw` (a head's bytes).
        init(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) {
            func named(_ lowercased: StaticString) -> Bool { HTTPMessageHead.name(raw, range, is: lowercased) }
            switch range.count {
            case 2: if named("te") { self = .hopByHop; return }
            case 4: if named("host") { self = .host; return }
            case 6: if named("cookie") { self = .cookie; return }
            case 7: if named("upgrade") || named("trailer") { self = .hopByHop; return }
            case 9: if named("forwarded") || named("x-real-ip") { self = .forwarding; return }
            case 10: if named("connection") || named("keep-alive") { self = .hopByHop; return }
            case 13: if named("authorization") { self = .authorization; return }
            case 14:
                if named("content-length") { self = .contentLength; return }
                if named("x-gateway-user") { self = .gatewayUser; return }
            case 16: if named("proxy-connection") { self = .hopByHop; return }
            case 17: if named("transfer-encoding") { self = .transferEncoding; return }
            case 18: if named("proxy-authenticate") { self = .hopByHop; return }
            case 19: if named("proxy-authorization") { self = .hopByHop; return }
            default: break
            }
            let prefix: StaticString = "x-forwarded-"
            self = range.count > prefix.utf8CodeUnitCount
                && HTTPMessageHead.name(raw, range.lowerBound..<(range.lowerBound + prefix.utf8CodeUnitCount), is: prefix) ? .forwarding : .other
        }
    }

    /// Whether `value` can be sent as a field value: no control character but a tab (a line break would start a
    /// field of its own). The client's own values were checked by NIO's parser and the forwarding fields are made
    /// of checked parts; the user name comes from a login module, so it is checked before it goes upstream (the
    /// upstream connections have no header validator of NIO's: it would check every field of every request again).
    static func isValidFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }
    }

    /// The lower-cased tokens of `Connection` fields: the fields they name are about this connection only.
    static func connectionTokens(_ headers: HTTPHeaders) -> Set<String> {
        var tokens = Set<String>()
        for value in headers["connection"] { insertTokens(of: value, into: &tokens) }
        return tokens
    }

    /// Adds the lower-cased, comma-separated tokens of a `Connection` value to `tokens`.
    private static func insertTokens(of value: String, into tokens: inout Set<String>) {
        for token in value.split(separator: ",") { tokens.insert(HeaderText.lowercased(String(HeaderText.trimmed(token)))) }
    }

    /// The upstream request's head for `client`, as the bytes written upstream: its method, `target` (the
    /// upstream's base path, the routed remainder and the query without the realm's credential parameters), `Host`
    /// set to the upstream's authority. Never forwarded: hop-by-hop fields, `Authorization`, the realm's credential
    /// headers and cookies, a client's `X-Gateway-User`, a client's forwarding fields (replaced by `forwarding`). The
    /// body's framing is kept: `Content-Length` as sent, or `chunked` (`chunked` is then `true`: the body, which NIO's
    /// decoder hands over without its chunks' framing, is chunked again, ``chunk(_:allocator:)``).
    static func make(from client: HTTPRequestHead, target: String, authority: String, realm: Realm?, forwarding: ForwardingHeaders,
                     user: String?, allocator: ByteBufferAllocator) -> (head: ByteBuffer, chunked: Bool) {
        let tokens = client.headers.contains(name: "connection") ? connectionTokens(client.headers) : []
        let credentialHeaders = realm?.headers ?? []
        // Collected as pairs and made `HTTPHeaders` once: its `add` checks every name for ASCII again (names from
        // NIO's parser are tokens already, ours are constants).
        var headers: [(String, String)] = []
        headers.reserveCapacity(client.headers.count + 6)
        headers.append(("Host", authority))
        var cookies: [String] = []
        var chunked = false
        var length: String?
        for (name, value) in client.headers {
            switch FieldKind(name) {
            case .cookie:
                cookies.append(value)
                continue
            case .transferEncoding:
                chunked = true
                continue
            case .contentLength:
                // Framing: set below, never dropped (not even when `Connection` names it: the upstream would read the
                // body as a request of its own).
                length = value
                continue
            case .host, .hopByHop, .authorization, .gatewayUser, .forwarding:
                continue
            case .other:
                break
            }
            if !tokens.isEmpty, tokens.contains(HeaderText.lowercased(name)) { continue }
            if !credentialHeaders.isEmpty, credentialHeaders.contains(where: { HeaderText.equalsIgnoringCase($0, name) }) { continue }
            headers.append((name, value))
        }
        if !cookies.isEmpty, let cookie = CredentialCarriers.cookieField(cookies, removing: Set(realm?.cookies ?? [])) {
            headers.append(("Cookie", cookie))
        }
        for (name, value) in forwarding.fields { headers.append((name, value)) }
        if let user { headers.append((HTTPProxy.userHeader, user)) }
        // The body as NIO's decoder framed it: chunks (handed over without their framing, chunked again), else the
        // length; never both (NIO's decoder refuses both, and the length would not be the chunks' data's).
        if chunked {
            headers.append(("Transfer-Encoding", "chunked"))
        } else if let length {
            headers.append(("Content-Length", length))
        } else if client.method != .GET, client.method != .HEAD {
            // No body: say so (some servers wait for one, or refuse the request without a length).
            headers.append(("Content-Length", "0"))
        }
        var head = allocator.buffer(capacity: 128 + target.utf8.count + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 })
        head.writeString(client.method.rawValue)
        head.writeStaticString(" ")
        head.writeString(target)
        head.writeStaticString(" HTTP/1.1\r\n")
        for (name, value) in headers { writeField(name, value, to: &head) }
        head.writeStaticString("\r\n")
        return (head, chunked)
    }

    private static func writeField(_ name: String, _ value: String, to buffer: inout ByteBuffer) {
        buffer.writeString(name)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
    }

    /// A piece of a chunked request body as a chunk (empty: nothing, an empty chunk would end the body).
    static func chunk(_ data: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard data.readableBytes > 0 else { return nil }
        var chunk = allocator.buffer(capacity: data.readableBytes + 20)
        chunk.writeString(String(data.readableBytes, radix: 16))
        chunk.writeStaticString("\r\n")
        var data = data
        chunk.writeBuffer(&data)
        chunk.writeStaticString("\r\n")
        return chunk
    }

    /// The end of a chunked request body: the last chunk and the trailer fields.
    static func lastChunk(trailers: HTTPHeaders?, allocator: ByteBufferAllocator) -> ByteBuffer {
        var end = allocator.buffer(capacity: 5)
        end.writeStaticString("0\r\n")
        for (name, value) in trailers ?? [:] { writeField(name, value, to: &end) }
        end.writeStaticString("\r\n")
        return end
    }

    /// The upstream's answer head for the client, as bytes: the status line with the client's version, the fields as
    /// the upstream wrote them but hop-by-hop fields and those its `Connection` names (`Transfer-Encoding` kept when
    /// `keepTransferEncoding`: the chunks go on as they came), `WWW-Authenticate` set to `challenge` (Negotiate's mutual
    /// authentication), `Connection: close` when the client connection ends after it (`keep-alive` to an HTTP/1.0
    /// client otherwise).
    /// - Parameter tokens: the answer's ``connectionTokens(_:bytes:)``.
    static func response(_ head: HTTPMessageHead, bytes: ByteBuffer, tokens: Set<String>, clientMinorVersion: Int, challenge: String?,
                         close: Bool, keepTransferEncoding: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        bytes.withUnsafeReadableBytes { raw in
            var out = allocator.buffer(capacity: raw.count + 64 + (challenge?.utf8.count ?? 0))
            out.writeStaticString(clientMinorVersion == 0 ? "HTTP/1.0" : "HTTP/1.1")
            // The rest of the status line (" 200 OK\r\n") as it came.
            var lineEnd = 8
            while raw[lineEnd] != 0x0A { lineEnd += 1 }
            out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[8...lineEnd]))
            for field in head.fields {
                switch FieldKind(raw, field.name) {
                case .hopByHop, .host: continue
                case .transferEncoding where !keepTransferEncoding: continue
                default: break
                }
                if !tokens.isEmpty, tokens.contains(HeaderText.lowercased(String(decoding: raw[field.name], as: UTF8.self))) { continue }
                if challenge != nil, HTTPMessageHead.name(raw, field.name, is: "www-authenticate") { continue }
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.name]))
                out.writeStaticString(": ")
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.value]))
                out.writeStaticString("\r\n")
            }
            if let challenge { writeField("WWW-Authenticate", challenge, to: &out) }
            if close {
                out.writeStaticString("Connection: close\r\n")
            } else if clientMinorVersion == 0 {
                out.writeStaticString("Connection: keep-alive\r\n")
            }
            out.writeStaticString("\r\n")
            return out
        }
    }

    /// The lower-cased tokens of an answer's `Connection` fields (`head`, read from `bytes`), as
    /// ``connectionTokens(_:)`` reads a request's: read once per answer, for ``keepsAlive(_:tokens:)`` and
    /// ``response(_:bytes:tokens:clientMinorVersion:challenge:close:keepTransferEncoding:allocator:)``.
    static func connectionTokens(_ head: HTTPMessageHead, bytes: ByteBuffer) -> Set<String> {
        bytes.withUnsafeReadableBytes { raw in
            var tokens = Set<String>()
            for field in head.fields where HTTPMessageHead.name(raw, field.name, is: "connection") {
                insertTokens(of: String(decoding: raw[field.value], as: UTF8.self), into: &tokens)
            }
            return tokens
        }
    }

    /// Whether the upstream keeps its connection open after an answer with `head` and `Connection` `tokens`
    /// (HTTP/1.1 unless it says `close`; HTTP/1.0 only when it says `keep-alive`).
    static func keepsAlive(_ head: HTTPMessageHead, tokens: Set<String>) -> Bool {
        !tokens.contains("close") && (head.minorVersion == 1 || tokens.contains("keep-alive"))
    }
}
