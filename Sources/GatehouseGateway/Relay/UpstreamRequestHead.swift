import GatehouseHTTP
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The head of a request as the gateway sends it upstream, and of an upstream's answer as it goes back to the
/// client, for the event-loop relay (``GatewayHTTPHandler``); the same rules as ``HTTPProxy``.
enum UpstreamRequestHead {
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
    /// field of its own). The client's own values were checked by ``HTTPMessageHead`` and the forwarding fields are made
    /// of checked parts; the user name comes from a login module, so it is checked before it goes upstream (the
    /// upstream connections have no header validator of NIO's: it would check every field of every request again).
    static func isValidFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }
    }

    /// Adds the lower-cased, comma-separated tokens of a `Connection` value to `tokens`.
    private static func insertTokens(of value: String, into tokens: inout Set<String>) {
        for token in value.split(separator: ",") { tokens.insert(HeaderText.lowercased(String(HeaderText.trimmed(token)))) }
    }

    /// The upstream request's head for `client`, as the bytes written upstream: its method, `target` (the
    /// upstream's base path, the routed remainder and the query without the realm's credential parameters), `Host`
    /// set to the upstream's authority, the client's other fields copied as they came but these, never forwarded:
    /// hop-by-hop fields and those its `Connection` names, `Authorization`, the realm's credential headers and
    /// cookies, a client's `X-Gateway-User`, a client's forwarding fields (replaced by `forwarding`), any name with
    /// `_` (as nginx drops them). The body's
    /// framing is kept: `Transfer-Encoding: chunked` (the chunks go on as they came), else its `Content-Length`
    /// (never dropped, not even when `Connection` names it: the upstream would read the body as a request of its own),
    /// else `Content-Length: 0` for a method other than `GET` and `HEAD` (some servers wait for a body, or refuse a
    /// request without a length).
    static func make(from client: ClientRequestHead, target: String, authority: String, realm: Realm?, forwarding: ForwardingHeaders,
                     user: String?, traceParent: String? = nil, allocator: ByteBufferAllocator) -> ByteBuffer {
        let head = client.head
        let credentialHeaders = realm?.headers ?? []
        // An OPTIONS goes one hop further with one less to go (RFC 9110 §7.6.2).
        let maxForwards = client.optionsMaxForwards.map { $0 - 1 }
        return client.bytes.withUnsafeReadableBytes { raw in
            guard case .request(let method, _) = head.startLine else { return allocator.buffer(capacity: 0) }
            let tokens = connectionTokens(head, raw: raw)
            var cookies: [String] = []
            for field in head.fields where FieldKind(raw, field.name) == .cookie {
                cookies.append(String(decoding: raw[field.value], as: UTF8.self))
            }
            // Which fields go as they came.
            let keeps = { (field: HTTPMessageHead.Field) -> Bool in
                switch FieldKind(raw, field.name) {
                case .cookie, .transferEncoding, .contentLength, .host, .hopByHop, .authorization, .gatewayUser, .forwarding:
                    return false
                case .other:
                    // A name with `_` is dropped, as nginx does: upstreams that fold `_` into `-` (WSGI, PHP, CGI)
                    // would read `X_Gateway_User` as the gateway's `X-Gateway-User`.
                    if raw[field.name].contains(UInt8(ascii: "_")) { return false }
                }
                if !tokens.isEmpty, tokens.contains(HeaderText.lowercased(String(decoding: raw[field.name], as: UTF8.self))) { return false }
                if maxForwards != nil, HTTPMessageHead.name(raw, field.name, is: "max-forwards") { return false }
                // A traced exchange sends its own span as the upstream's parent, in place of the client's.
                if traceParent != nil, HTTPMessageHead.name(raw, field.name, is: "traceparent") { return false }
                return credentialHeaders.isEmpty || !credentialHeaders.contains(where: { ClientRequestHead.name(raw, field.name, equals: $0) })
            }
            let cookie = cookies.isEmpty ? nil : CredentialCarriers.cookieField(cookies, removing: Set(realm?.cookies ?? []))
            var capacity = raw.count + target.utf8.count + authority.utf8.count + 96
            capacity += cookie.map { HeadBytesWriter.fieldLength("Cookie", $0) } ?? 0
            capacity += forwarding.fields.reduce(0) { $0 + HeadBytesWriter.fieldLength($1.name, $1.value) }
            capacity += user.map { HeadBytesWriter.fieldLength(GatewayRequestPolicy.userHeader, $0) } ?? 0
            capacity += maxForwards == nil ? 0 : 32
            capacity += traceParent.map { HeadBytesWriter.fieldLength("traceparent", $0) } ?? 0
            return HeadBytesWriter.buffer(capacity: capacity, allocator: allocator) { out in
                out.write(raw[method])
                out.write(" ")
                out.write(target)
                out.write(" HTTP/1.1\r\nHost: ")
                out.write(authority)
                out.write("\r\n")
                copyLines(of: head, raw, to: &out, keeping: keeps)
                if let cookie { out.writeField("Cookie", cookie) }
                for (name, value) in forwarding.fields { out.writeField(name, value) }
                if let user { out.writeField(GatewayRequestPolicy.userHeader, user) }
                if let maxForwards { out.writeField("Max-Forwards", String(maxForwards)) }
                if let traceParent { out.writeField("traceparent", traceParent) }
                if head.framing == .chunked {
                    out.write("Transfer-Encoding: chunked\r\n")
                } else if let length = head.contentLength {
                    out.write("Content-Length: ")
                    out.write(String(length))
                    out.write("\r\n")
                } else if client.method == .other {
                    out.write("Content-Length: 0\r\n")
                }
                out.write("\r\n")
            }
        }
    }

    /// Copies the field lines of `head` (in `raw`) that `keeps`, as they came: a run of consecutive lines at once
    /// (each line ends where the next field's name starts; the last, two bytes before the head's end).
    private static func copyLines(of head: HTTPMessageHead, _ raw: UnsafeRawBufferPointer, to out: inout HeadBytesWriter,
                                  keeping keeps: (HTTPMessageHead.Field) -> Bool) {
        var runStart: Int?
        for field in head.fields {
            if keeps(field) {
                if runStart == nil { runStart = field.name.lowerBound }
            } else if let start = runStart {
                out.write(raw[start..<field.name.lowerBound])
                runStart = nil
            }
        }
        if let start = runStart { out.write(raw[start..<(head.length - 2)]) }
    }

    /// The upstream's answer head for the client, as bytes: the status line with the client's version, the fields as
    /// the upstream wrote them but hop-by-hop fields and those its `Connection` names (`Transfer-Encoding` kept when
    /// `keepTransferEncoding`: the chunks go on as they came), `WWW-Authenticate` set to `challenge` (Negotiate's mutual
    /// authentication), `Connection: close` when the client connection ends after it (`keep-alive` to an HTTP/1.0
    /// client otherwise).
    /// - Parameter tokens: the answer's ``connectionTokens(_:bytes:)``.
    /// - Parameter body: room kept after the head for a body the caller appends (no second allocation).
    static func response(_ head: HTTPMessageHead, bytes: ByteBuffer, tokens: Set<String>, clientMinorVersion: Int, challenge: String?,
                         close: Bool, keepTransferEncoding: Bool, reserving body: Int = 0, allocator: ByteBufferAllocator) -> ByteBuffer {
        bytes.withUnsafeReadableBytes { raw in
            let keeps = { (field: HTTPMessageHead.Field) -> Bool in
                switch FieldKind(raw, field.name) {
                case .hopByHop, .host: return false
                case .transferEncoding where !keepTransferEncoding: return false
                default: break
                }
                if !tokens.isEmpty, tokens.contains(HeaderText.lowercased(String(decoding: raw[field.name], as: UTF8.self))) { return false }
                return challenge == nil || !HTTPMessageHead.name(raw, field.name, is: "www-authenticate")
            }
            let capacity = raw.count + 64 + (challenge.map { HeadBytesWriter.fieldLength("WWW-Authenticate", $0) } ?? 0) + body
            return HeadBytesWriter.buffer(capacity: capacity, allocator: allocator) { out in
                out.write(clientMinorVersion == 0 ? "HTTP/1.0" : "HTTP/1.1")
                // The rest of the status line (" 200 OK\r\n") as it came.
                var lineEnd = 8
                while raw[lineEnd] != 0x0A { lineEnd += 1 }
                out.write(raw[8...lineEnd])
                copyLines(of: head, raw, to: &out, keeping: keeps)
                if let challenge { out.writeField("WWW-Authenticate", challenge) }
                if close {
                    out.write("Connection: close\r\n")
                } else if clientMinorVersion == 0 {
                    out.write("Connection: keep-alive\r\n")
                }
                out.write("\r\n")
            }
        }
    }

    /// The lower-cased tokens of an answer's `Connection` fields (`head`, read from `bytes`): read once per answer,
    /// for ``keepsAlive(_:tokens:)`` and
    /// ``response(_:bytes:tokens:clientMinorVersion:challenge:close:keepTransferEncoding:allocator:)``.
    static func connectionTokens(_ head: HTTPMessageHead, bytes: ByteBuffer) -> Set<String> {
        bytes.withUnsafeReadableBytes { connectionTokens(head, raw: $0) }
    }

    /// The lower-cased tokens of the `Connection` fields of `head`, a message whose bytes are `raw`: the fields they
    /// name are about this connection only.
    static func connectionTokens(_ head: HTTPMessageHead, raw: UnsafeRawBufferPointer) -> Set<String> {
        var tokens = Set<String>()
        for field in head.fields where HTTPMessageHead.name(raw, field.name, is: "connection") {
            insertTokens(of: String(decoding: raw[field.value], as: UTF8.self), into: &tokens)
        }
        return tokens
    }

    /// Whether the upstream keeps its connection open after an answer with `head` and `Connection` `tokens`
    /// (HTTP/1.1 unless it says `close`; HTTP/1.0 only when it says `keep-alive`).
    static func keepsAlive(_ head: HTTPMessageHead, tokens: Set<String>) -> Bool {
        !tokens.contains("close") && (head.minorVersion == 1 || tokens.contains("keep-alive"))
    }
}
