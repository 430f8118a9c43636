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
    /// cookies, a client's `X-Gateway-User`, a client's forwarding fields (replaced by `forwarding`). The body's
    /// framing is kept: `Transfer-Encoding: chunked` (the chunks go on as they came), else its `Content-Length`
    /// (never dropped, not even when `Connection` names it: the upstream would read the body as a request of its own),
    /// else `Content-Length: 0` for a method other than `GET` and `HEAD` (some servers wait for a body, or refuse a
    /// request without a length).
    static func make(from client: ClientRequestHead, target: String, authority: String, realm: Realm?, forwarding: ForwardingHeaders,
                     user: String?, allocator: ByteBufferAllocator) -> ByteBuffer {
        let head = client.head
        let credentialHeaders = realm?.headers ?? []
        return client.bytes.withUnsafeReadableBytes { raw in
            let tokens = connectionTokens(head, raw: raw)
            var out = allocator.buffer(capacity: raw.count + target.utf8.count + authority.utf8.count + 64 + forwarding.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
                                       + (user?.utf8.count ?? 0))
            guard case .request(let method, _) = head.startLine else { return out }
            out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[method]))
            out.writeStaticString(" ")
            out.writeString(target)
            out.writeStaticString(" HTTP/1.1\r\nHost: ")
            out.writeString(authority)
            out.writeStaticString("\r\n")
            var cookies: [String] = []
            for field in head.fields {
                switch FieldKind(raw, field.name) {
                case .cookie:
                    cookies.append(String(decoding: raw[field.value], as: UTF8.self))
                    continue
                case .transferEncoding, .contentLength, .host, .hopByHop, .authorization, .gatewayUser, .forwarding:
                    continue
                case .other:
                    break
                }
                if !tokens.isEmpty, tokens.contains(HeaderText.lowercased(String(decoding: raw[field.name], as: UTF8.self))) { continue }
                if !credentialHeaders.isEmpty, credentialHeaders.contains(where: { ClientRequestHead.name(raw, field.name, equals: $0) }) {
                    continue
                }
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.name]))
                out.writeStaticString(": ")
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.value]))
                out.writeStaticString("\r\n")
            }
            if !cookies.isEmpty, let cookie = CredentialCarriers.cookieField(cookies, removing: Set(realm?.cookies ?? [])) {
                writeField("Cookie", cookie, to: &out)
            }
            for (name, value) in forwarding.fields { writeField(name, value, to: &out) }
            if let user { writeField(HTTPProxy.userHeader, user, to: &out) }
            if head.framing == .chunked {
                out.writeStaticString("Transfer-Encoding: chunked\r\n")
            } else if let length = head.contentLength {
                out.writeStaticString("Content-Length: ")
                out.writeString(String(length))
                out.writeStaticString("\r\n")
            } else if client.method == .other {
                out.writeStaticString("Content-Length: 0\r\n")
            }
            out.writeStaticString("\r\n")
            return out
        }
    }

    private static func writeField(_ name: String, _ value: String, to buffer: inout ByteBuffer) {
        buffer.writeString(name)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
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
