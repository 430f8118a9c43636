import GatehouseHTTP
import HTTPTypes
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
            let lower = HeaderText.lowercased(name)
            guard lower == "authorization" || lower == "cookie" || lower == "host" || ForwardingHeaders.isForwardingField(lower)
                || credentialHeaders.contains(where: { HeaderText.equalsIgnoringCase($0, lower) }) else { continue }
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
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
        for value in headers["connection"] {
            for token in value.split(separator: ",") {
                tokens.insert(HeaderText.lowercased(String(HeaderText.trimmed(token))))
            }
        }
        return tokens
    }

    /// The upstream request for `client`: its method, `target` (the upstream's base path, the routed remainder and
    /// the query without the realm's credential parameters), `Host` set to the upstream's authority. Never
    /// forwarded: hop-by-hop fields, `Authorization`, the realm's credential headers and cookies, a client's
    /// `X-Gateway-User`, a client's forwarding fields (replaced by `forwarding`). The body's framing is kept:
    /// `Content-Length` as sent, a chunked body chunked again by NIO's encoder.
    static func make(from client: HTTPRequestHead, target: String, authority: String, realm: Realm?, forwarding: ForwardingHeaders,
                     user: String?) -> HTTPRequestHead {
        let tokens = connectionTokens(client.headers)
        let credentialHeaders = realm.map { Set($0.headers.map { $0.lowercased() }) } ?? []
        // Collected as pairs and made `HTTPHeaders` once: its `add` checks every name for ASCII again (names from
        // NIO's parser are tokens already, ours are constants).
        var headers: [(String, String)] = []
        headers.reserveCapacity(client.headers.count + 6)
        headers.append(("Host", authority))
        var cookies: [String] = []
        var chunked = false
        var hasLength = false
        for (name, value) in client.headers {
            let lower = HeaderText.lowercased(name)
            switch lower {
            case "cookie":
                cookies.append(value)
                continue
            case "transfer-encoding":
                chunked = true
                continue
            case "content-length":
                hasLength = true
            default:
                break
            }
            if HTTPProxy.hopByHop.contains(lower) || tokens.contains(lower) || lower == "authorization" || lower == "x-gateway-user"
                || credentialHeaders.contains(lower) || ForwardingHeaders.isForwardingField(lower) { continue }
            headers.append((name, value))
        }
        if !cookies.isEmpty, let cookie = CredentialCarriers.cookieField(cookies, removing: Set(realm?.cookies ?? [])) {
            headers.append(("Cookie", cookie))
        }
        for (name, value) in forwarding.fields { headers.append((name, value)) }
        if let user { headers.append((HTTPProxy.userHeader, user)) }
        if chunked, !hasLength {
            headers.append(("Transfer-Encoding", "chunked"))
        } else if !hasLength, client.method != .GET, client.method != .HEAD {
            // No body: say so, rather than let NIO's encoder frame an empty chunked one.
            headers.append(("Content-Length", "0"))
        }
        return HTTPRequestHead(version: .http1_1, method: client.method, uri: target, headers: HTTPHeaders(headers))
    }

    /// The upstream's answer head for the client: hop-by-hop fields and those its `Connection` names dropped,
    /// `WWW-Authenticate` set to `challenge` (Negotiate's mutual authentication), `Connection: close` when the
    /// client connection ends after it.
    static func response(_ upstream: HTTPResponseHead, version: HTTPVersion, challenge: String?, close: Bool) -> HTTPResponseHead {
        let tokens = connectionTokens(upstream.headers)
        var headers: [(String, String)] = []
        headers.reserveCapacity(upstream.headers.count + 1)
        for (name, value) in upstream.headers {
            let lower = HeaderText.lowercased(name)
            if HTTPProxy.hopByHop.contains(lower) || tokens.contains(lower) { continue }
            if challenge != nil, lower == "www-authenticate" { continue }
            headers.append((name, value))
        }
        if let challenge { headers.append(("WWW-Authenticate", challenge)) }
        if close {
            headers.append(("Connection", "close"))
        } else if version == .http1_0 {
            headers.append(("Connection", "keep-alive"))
        }
        return HTTPResponseHead(version: version, status: upstream.status, headers: HTTPHeaders(headers))
    }
}
