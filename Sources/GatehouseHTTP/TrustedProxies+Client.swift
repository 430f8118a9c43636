package import HTTPTypes

extension TrustedProxies {
    /// Who a request comes from, and the host it asked for, as the server should believe it.
    package struct Client: Sendable, Equatable {
        /// The client's IP address: the peer's, or — from a trusted proxy — the nearest address of the forwarding
        /// chain that is not a trusted proxy itself.
        package var address: String?
        /// The host the client asked for (`X-Forwarded-Host`, or `host=` of `Forwarded`) when a trusted proxy says
        /// so; `nil`: the request's own authority.
        package var host: String?
        /// `http` or `https` as the client spoke it, when a trusted proxy says so.
        package var proto: String?

        package init(address: String?, host: String? = nil, proto: String? = nil) {
            self.address = address
            self.host = host
            self.proto = proto
        }
    }

    /// The client of a request from `peer` with `fields`. From a peer that is not a trusted proxy the forwarding
    /// fields are ignored (a client may claim anything): the peer is the client. From a trusted proxy only the one
    /// family of fields the proxies are configured to set is read (``forwardedField``: `X-Forwarded-For|Host|Proto`,
    /// or `Forwarded`'s `for=`, `host=`, `proto=`) — the other family is whatever the client wrote, passed through by
    /// the proxy. The chain (each proxy appends the address it saw) is read from its right end: the first address
    /// that is not a trusted proxy is the client's — what a client wrote at the left is never believed past a proxy
    /// that appended after it. A hop that is no address (`unknown`, an obfuscated name, garbage) ends the walk at the
    /// last address believed.
    package func client(peer: String?, fields: HTTPFields) -> Client {
        guard contains(peer) else { return Client(address: peer) }
        let chain: [String], host: String?, proto: String?
        switch forwardedField {
        case .xForwardedFor:
            chain = Self.listValues(fields, .xForwardedFor)
            host = Self.listValues(fields, .xForwardedHost).first
            proto = Self.listValues(fields, .xForwardedProto).first
        case .forwarded:
            let forwarded = Self.forwardedElements(fields)
            chain = forwarded.map { $0["for"] ?? "unknown" }
            host = forwarded.first?["host"]
            proto = forwarded.first?["proto"]
        }
        var address = peer
        for hop in chain.reversed() {
            guard let next = Self.nodeAddress(hop) else { break }
            address = next
            if !contains(next) { break }
        }
        return Client(address: address, host: host.flatMap(Self.validHost),
                      proto: proto.map { $0.lowercased() }.flatMap { $0 == "http" || $0 == "https" ? $0 : nil })
    }

    /// Every value of the comma-separated list fields named `name`, trimmed, in order.
    static func listValues(_ fields: HTTPFields, _ name: HTTPField.Name) -> [String] {
        fields[values: name].flatMap { $0.split(separator: ",") }.map { String(HeaderText.trimmed($0)) }.filter { !$0.isEmpty }
    }

    /// `Forwarded` (RFC 7239 §4) as its elements, each a dictionary of lower-cased parameter names to unquoted
    /// values; commas and semicolons inside quoted strings do not split.
    static func forwardedElements(_ fields: HTTPFields) -> [[String: String]] {
        var elements: [[String: String]] = []
        for value in fields[values: .forwarded] {
            var element: [String: String] = [:], pair = "", quoted = false, escaped = false
            func endPair() {
                if let equals = pair.firstIndex(of: "=") {
                    let name = HeaderText.trimmed(pair[..<equals]).lowercased()
                    let raw = String(HeaderText.trimmed(pair[pair.index(after: equals)...]))
                    element[name] = raw.hasPrefix("\"") && raw.hasSuffix("\"") && raw.count >= 2 ? String(raw.dropFirst().dropLast()) : raw
                }
                pair = ""
            }
            for character in value {
                if escaped { pair.append(character); escaped = false; continue }
                switch character {
                case "\\" where quoted: escaped = true   // a quoted-pair: the next character as it is
                case "\"": quoted.toggle(); pair.append(character)
                case ";" where !quoted: endPair()
                case "," where !quoted:
                    endPair()
                    if !element.isEmpty { elements.append(element) }
                    element = [:]
                default: pair.append(character)
                }
            }
            endPair()
            if !element.isEmpty { elements.append(element) }
        }
        return elements
    }

    /// The address of a chain's node (`192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:4711`, `2001:db8::1`), as text;
    /// `nil` for anything that is no IP address.
    static func nodeAddress(_ node: String) -> String? {
        var text = HeaderText.trimmed(node)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]   // IPv4 with a port
        }
        let address = String(text)
        return IPAddress(address) == nil ? nil : address
    }

    /// `host[:port]` when made of the characters a host name, an IPv4 or a bracketed IPv6 address may hold, lower-cased;
    /// `nil` for anything else (what a `Host` or a forwarded host may be, here and in the gateway's forwarding).
    package static func validHost(_ host: String) -> String? {
        guard !host.isEmpty, host.utf8.count <= 255,
              host.utf8.allSatisfy({ byte in
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~:[]".utf8.contains(byte)
              })
        else { return nil }
        return host.lowercased()
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwarded = HTTPField.Name("Forwarded")!
}
