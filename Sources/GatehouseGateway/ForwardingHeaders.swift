import GatehouseHTTP
import HTTPTypes

/// The `X-Forwarded-For`, `X-Forwarded-Proto`, `X-Forwarded-Host` and `Forwarded` (RFC 7239) fields the gateway
/// sends upstream.
///
/// A client's own fields of that family (every `X-Forwarded-*`, `Forwarded`, `X-Real-IP`) are never forwarded as
/// they are: a client could claim any address. From a peer in ``TrustedProxies`` they are kept and the peer is
/// appended (`X-Forwarded-For: client, proxy`); from any other peer they are dropped and the gateway states the
/// peer's address, `http` and the request's `Host`.
struct ForwardingHeaders: Sendable, Equatable {
    /// The fields to send upstream, in order.
    let fields: [(name: String, value: String)]

    static func == (lhs: ForwardingHeaders, rhs: ForwardingHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Whether a client's field (lower-cased name) belongs to the forwarding family the gateway rewrites.
    static func isForwardingField(_ name: String) -> Bool {
        name.hasPrefix("x-forwarded-") || name == "forwarded" || name == "x-real-ip"
    }

    /// The fields for a request from `peer` (its IP address) with `headers` and `host` (its `Host`).
    /// - Parameter proto: `https` when the gateway itself serves TLS.
    init(headers: HTTPFields, host: String?, peer: String?, trusted: TrustedProxies, proto: String = "http") {
        let host = host.flatMap { Self.isValidHost($0) ? $0 : nil }
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(4)
        if trusted.contains(peer) {
            // Keep what the proxy said, append the proxy itself.
            func values(_ name: String) -> [String] { headers.filter { $0.name.canonicalName == name }.map(\.value) }
            for field in headers where Self.isForwardingField(field.name.canonicalName) && field.name.canonicalName != "x-forwarded-for"
                && field.name.canonicalName != "forwarded" {
                fields.append((field.name.rawName, field.value))
            }
            fields.append(("X-Forwarded-For", (values("x-forwarded-for") + [peer ?? "unknown"]).joined(separator: ", ")))
            if values("x-forwarded-proto").isEmpty { fields.append(("X-Forwarded-Proto", proto)) }
            if values("x-forwarded-host").isEmpty, let host { fields.append(("X-Forwarded-Host", host)) }
            fields.append(("Forwarded", (values("forwarded") + [Self.forwardedElement(peer: peer, host: host, proto: proto)]).joined(separator: ", ")))
        } else {
            fields.append(("X-Forwarded-For", peer ?? "unknown"))
            fields.append(("X-Forwarded-Proto", proto))
            if let host { fields.append(("X-Forwarded-Host", host)) }
            fields.append(("Forwarded", Self.forwardedElement(peer: peer, host: host, proto: proto)))
        }
        self.fields = fields
    }

    /// `for=192.0.2.1;host="h:8090";proto=http` (an IPv6 node quoted and in brackets).
    static func forwardedElement(peer: String?, host: String?, proto: String = "http") -> String {
        var node = "unknown"
        if let peer { node = peer.utf8.contains(UInt8(ascii: ":")) ? "\"[\(peer)]\"" : peer }
        var element = "for=\(node)"
        if let host { element += ";host=\"\(host)\"" }
        return element + ";proto=\(proto)"
    }

    /// `host[:port]` made of the characters a host name, an IPv4 or a bracketed IPv6 address may hold
    /// (``TrustedProxies/validHost(_:)``).
    static func isValidHost(_ host: String) -> Bool { TrustedProxies.validHost(host) != nil }
}
