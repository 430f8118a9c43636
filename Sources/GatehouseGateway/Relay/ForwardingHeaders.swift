import GatehouseHTTP
import HTTPTypes

/// The `X-Forwarded-For`, `X-Forwarded-Proto`, `X-Forwarded-Host` and `Forwarded` (RFC 7239) fields the gateway
/// sends upstream.
///
/// A client's own fields of that family (every `X-Forwarded-*`, `Forwarded`, `X-Real-IP`) are never forwarded as
/// they are: a client could claim any address. From a peer in ``TrustedProxies`` the family it is configured to
/// set (``TrustedProxies/forwardedField``) is kept and the peer appended (`X-Forwarded-For: client, proxy`), the
/// other family restated from it (the proxy passed that one through as the client wrote it); from any other peer
/// they are dropped and the gateway states the peer's address, `http` and the request's `Host`.
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
            // Keep the family the proxy is configured to set (``TrustedProxies/forwardedField``) and append the proxy
            // itself; the other family is what the client wrote (a proxy passes it through untouched), so it is
            // restated from what the kept one says rather than forwarded.
            func values(_ name: String) -> [String] { headers.filter { $0.name.canonicalName == name }.map(\.value) }
            let client = trusted.client(peer: peer, fields: headers)
            let stated = client.address.map { $0 == peer ? [] : [Self.forwardedElement(peer: $0, host: client.host, proto: client.proto)] } ?? []
            switch trusted.forwardedField {
            case .xForwardedFor:
                for field in headers where field.name.canonicalName.hasPrefix("x-forwarded-") && field.name.canonicalName != "x-forwarded-for" {
                    fields.append((field.name.rawName, field.value))
                }
                fields.append(("X-Forwarded-For", (values("x-forwarded-for") + [peer ?? "unknown"]).joined(separator: ", ")))
                if values("x-forwarded-proto").isEmpty { fields.append(("X-Forwarded-Proto", proto)) }
                if values("x-forwarded-host").isEmpty, let host { fields.append(("X-Forwarded-Host", host)) }
                fields.append(("Forwarded", (stated + [Self.forwardedElement(peer: peer, host: host, proto: proto)]).joined(separator: ", ")))
            case .forwarded:
                let chain = (client.address.map { $0 == peer ? [] : [$0] } ?? []) + [peer ?? "unknown"]
                fields.append(("X-Forwarded-For", chain.joined(separator: ", ")))
                fields.append(("X-Forwarded-Proto", client.proto ?? proto))
                if let host = client.host ?? host { fields.append(("X-Forwarded-Host", host)) }
                fields.append(("Forwarded", (values("forwarded") + [Self.forwardedElement(peer: peer, host: host, proto: proto)]).joined(separator: ", ")))
            }
        } else {
            fields.append(("X-Forwarded-For", peer ?? "unknown"))
            fields.append(("X-Forwarded-Proto", proto))
            if let host { fields.append(("X-Forwarded-Host", host)) }
            fields.append(("Forwarded", Self.forwardedElement(peer: peer, host: host, proto: proto)))
        }
        self.fields = fields
    }

    /// `for=192.0.2.1;host="h:8090";proto=http` (an IPv6 node quoted and in brackets).
    static func forwardedElement(peer: String?, host: String?, proto: String? = "http") -> String {
        var node = "unknown"
        if let peer { node = peer.utf8.contains(UInt8(ascii: ":")) ? "\"[\(peer)]\"" : peer }
        var element = "for=\(node)"
        if let host { element += ";host=\"\(host)\"" }
        return element + (proto.map { ";proto=\($0)" } ?? "")
    }

    /// `host[:port]` made of the characters a host name, an IPv4 or a bracketed IPv6 address may hold
    /// (``TrustedProxies/validHost(_:)``).
    static func isValidHost(_ host: String) -> Bool { TrustedProxies.validHost(host) != nil }
}
