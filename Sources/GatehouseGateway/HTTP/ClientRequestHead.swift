import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import NIOCore

/// A client's request head as the gateway read it (``HTTPMessageHead``), with its bytes: what the relay asks of a
/// request — its method, target, version, a few fields — read in place, without making a string of every field
/// (``GatewayHTTPHandler`` reads client requests with it; the fields it copies upstream go as bytes,
/// ``UpstreamRequestHead/make(from:target:authority:realm:forwarding:user:allocator:)``).
struct ClientRequestHead {
    /// The head's bytes, from its request line to its empty last line.
    let bytes: ByteBuffer
    let head: HTTPMessageHead
    /// The method's kind, for the few the relay treats apart.
    let method: Method

    enum Method: Equatable {
        case get, head, other
    }

    init(bytes: ByteBuffer, head: HTTPMessageHead) {
        self.bytes = bytes
        self.head = head
        guard case .request(let method, _) = head.startLine else {
            self.method = .other
            return
        }
        self.method = bytes.withUnsafeReadableBytes { raw in
            if HTTPMessageHead.name(raw, method, isExactly: "GET") { return .get }
            if HTTPMessageHead.name(raw, method, isExactly: "HEAD") { return .head }
            return .other
        }
    }

    /// `0` for HTTP/1.0, `1` for HTTP/1.1.
    var minorVersion: Int { head.minorVersion }

    /// Whether the request announces a body.
    var hasBody: Bool { head.framing != .none }

    /// The method as sent (a known method: ``HTTPMessageHead/knownMethods``).
    var methodName: String {
        guard case .request(let method, _) = head.startLine else { return "" }
        return bytes.withUnsafeReadableBytes { String(decoding: $0[method], as: UTF8.self) }
    }

    /// The request target as sent (origin form).
    var target: String {
        guard case .request(_, let target) = head.startLine else { return "/" }
        return bytes.withUnsafeReadableBytes { String(decoding: $0[target], as: UTF8.self) }
    }

    /// Whether the request target is `text`, compared without making a string of it.
    func target(is text: String) -> Bool {
        guard case .request(_, let target) = head.startLine else { return false }
        return bytes.withUnsafeReadableBytes { text.utf8.elementsEqual($0[target]) }
    }

    /// The value of the first field named `lowercased` (ASCII case ignored).
    func first(_ lowercased: StaticString) -> String? {
        bytes.withUnsafeReadableBytes { raw in
            for field in head.fields where HTTPMessageHead.name(raw, field.name, is: lowercased) {
                return String(decoding: raw[field.value], as: UTF8.self)
            }
            return nil
        }
    }

    /// Whether the first field named `lowercased` has the value `value` (`nil`: there is no such field), compared
    /// without making a string of it.
    func first(_ lowercased: StaticString, is value: String?) -> Bool {
        bytes.withUnsafeReadableBytes { raw in
            guard let field = head.fields.first(where: { HTTPMessageHead.name(raw, $0.name, is: lowercased) }) else { return value == nil }
            guard let value else { return false }
            return value.utf8.elementsEqual(raw[field.value])
        }
    }

    /// The values of the fields named `lowercased`.
    func values(_ lowercased: StaticString) -> [String] {
        bytes.withUnsafeReadableBytes { raw in
            head.fields.lazy.filter { HTTPMessageHead.name(raw, $0.name, is: lowercased) }.map { String(decoding: raw[$0.value], as: UTF8.self) }
        }
    }

    /// Whether sending the request twice has the effect of sending it once (RFC 9110 §9.2.2: `GET`, `HEAD`, `OPTIONS`,
    /// `PUT`, `DELETE`): what the gateway may send again on a new connection when a kept one closed under it.
    var isIdempotent: Bool {
        if method != .other { return true }
        guard case .request(let method, _) = head.startLine else { return false }
        return bytes.withUnsafeReadableBytes { raw in
            HTTPMessageHead.name(raw, method, isExactly: "OPTIONS") || HTTPMessageHead.name(raw, method, isExactly: "PUT")
                || HTTPMessageHead.name(raw, method, isExactly: "DELETE")
        }
    }

    /// Whether the request is an `OPTIONS` with `Max-Forwards: 0`: for the gateway itself, never forwarded (RFC 9110
    /// §7.6.2). A client asks with it whether its credentials would be admitted to a target, without reaching the
    /// upstream (the SDK's WebSocket client does before its handshake, whose refusal it cannot read).
    var isForTheGatewayItself: Bool { optionsMaxForwards == 0 }

    /// An `OPTIONS` request's `Max-Forwards` (RFC 9110 §7.6.2: digits; the first such field), `nil` for another method,
    /// no field or one that is no number (forwarded as it came).
    var optionsMaxForwards: Int? {
        guard method == .other, case .request(let method, _) = head.startLine else { return nil }
        return bytes.withUnsafeReadableBytes { raw in
            guard HTTPMessageHead.name(raw, method, isExactly: "OPTIONS"),
                  let field = head.fields.first(where: { HTTPMessageHead.name(raw, $0.name, is: "max-forwards") })
            else { return nil }
            let digits = raw[field.value]
            guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
    }

    /// The lower-cased tokens of the request's `Connection` fields.
    var connectionTokens: Set<String> {
        bytes.withUnsafeReadableBytes { raw in UpstreamRequestHead.connectionTokens(head, raw: raw) }
    }

    /// Whether the client keeps its connection open after this exchange (HTTP/1.1 unless it says `close`; HTTP/1.0
    /// only when it says `keep-alive`), as NIO's `HTTPRequestHead.isKeepAlive` reads it.
    var isKeepAlive: Bool {
        let tokens = connectionTokens
        return head.minorVersion == 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }

    /// Whether the request's `Authorization` is `remembered`'s (compared in constant time) and the memory still
    /// admits it to `service` (``RememberedAdmission/admits(authorization:to:now:)``).
    func isAdmitted(by remembered: RememberedAdmission, to service: ProtectedService) -> Bool {
        let single = bytes.withUnsafeReadableBytes { raw -> Bool? in
            var found: HTTPMessageHead.Field?
            for field in head.fields where UpstreamRequestHead.FieldKind(raw, field.name) == .authorization {
                // More than one: joined as a string, below.
                guard found == nil else { return nil }
                found = field
            }
            guard let found else { return false }
            var memory = remembered.authorization
            return memory.withUTF8 { ConstantTime.sameBytes(UnsafeRawBufferPointer(rebasing: raw[found.value]), UnsafeRawBufferPointer($0)) }
        }
        switch single {
        case false?: return false
        case true?: return remembered.holds(for: service)
        case nil: return remembered.admits(authorization: values("authorization").joined(separator: ", "), to: service)
        }
    }

    /// The fields admission and ``ForwardingHeaders`` read — `Authorization`, `Cookie`, `Host`, the realm's credential
    /// headers and the forwarding family — as `HTTPFields`; the rest are copied once, as bytes, into the upstream head.
    func admissionFields(realm: Realm?) -> HTTPFields {
        let credentialHeaders = realm?.headers ?? []
        return bytes.withUnsafeReadableBytes { raw in
            var fields = HTTPFields()
            fields.reserveCapacity(4)
            for field in head.fields {
                switch UpstreamRequestHead.FieldKind(raw, field.name) {
                case .authorization, .cookie, .host, .forwarding:
                    break
                default:
                    guard !credentialHeaders.isEmpty,
                          credentialHeaders.contains(where: { Self.name(raw, field.name, equals: $0) }) else { continue }
                }
                append(field, raw, to: &fields)
            }
            return fields
        }
    }

    /// Every field as `HTTPFields` (a WebSocket upgrade's relay reads its protocols and extensions from them).
    var allFields: HTTPFields {
        bytes.withUnsafeReadableBytes { raw in
            var fields = HTTPFields()
            fields.reserveCapacity(head.fields.count)
            for field in head.fields { append(field, raw, to: &fields) }
            return fields
        }
    }

    private func append(_ field: HTTPMessageHead.Field, _ raw: UnsafeRawBufferPointer, to fields: inout HTTPFields) {
        // Names are tokens (``HTTPMessageHead``), values free of control characters: both valid as they are.
        if let name = HTTPField.Name(String(decoding: raw[field.name], as: UTF8.self)) {
            fields.append(HTTPField(name: name, value: String(decoding: raw[field.value], as: UTF8.self)))
        }
    }

    /// Whether the field name at `range` of `raw` is `name`, ASCII case ignored.
    static func name(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, equals name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == range.count else { return false }
        var index = range.lowerBound
        for expected in utf8 {
            if HeaderText.lower(raw[index]) != HeaderText.lower(expected) { return false }
            index += 1
        }
        return true
    }
}
