#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The peers whose `X-Forwarded-*` and `Forwarded` fields are believed: a load balancer or TLS terminator in front
/// of the gateway (which keeps and appends to them; every other peer's are dropped and replaced by its own) or of the
/// server (which takes the client's address and the public host from them: ``client(peer:fields:)``).
///
/// Entries are addresses (`10.0.0.5`, `::1`) or CIDR blocks (`10.0.0.0/8`, `fd00::/8`); an IPv4-mapped IPv6 peer
/// (`::ffff:10.0.0.5`) matches the IPv4 entries.
public struct TrustedProxies: Sendable, Equatable {
    /// One address block.
    struct Block: Sendable, Equatable {
        var address: IPAddress
        var prefixLength: Int

        func contains(_ other: IPAddress) -> Bool {
            guard other.bytes.count == address.bytes.count else { return false }
            var remaining = prefixLength
            for (mine, theirs) in zip(address.bytes, other.bytes) {
                guard remaining > 0 else { return true }
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if mine & mask != theirs & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let blocks: [Block]

    /// The one family of forwarding fields the trusted proxies set, and so the only one read: a proxy overwrites or
    /// appends to the family it is configured for and passes the other through as the client wrote it (nginx with
    /// the README's `Examples/nginx/*.conf` appends to `X-Forwarded-For` and leaves a client's `Forwarded` untouched),
    /// so reading the other family — or preferring one when both are present — would let any client pick its own
    /// address behind a trusted proxy.
    public enum ForwardedField: String, Sendable, Equatable, CaseIterable, Codable {
        /// `X-Forwarded-For`, with `X-Forwarded-Host` and `X-Forwarded-Proto` (the default: what nginx, HAProxy and
        /// most load balancers set).
        case xForwardedFor = "x-forwarded-for"
        /// RFC 7239 `Forwarded`: `for=`, `host=` and `proto=`.
        case forwarded
    }

    /// The forwarding fields read from a trusted proxy (``ForwardedField/xForwardedFor`` unless configured).
    public var forwardedField: ForwardedField = .xForwardedFor

    /// No peer is trusted (the default).
    public static let none = TrustedProxies(blocks: [])

    init(blocks: [Block]) { self.blocks = blocks }

    /// An entry that is no address or block.
    public struct InvalidEntry: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses `entries`; a malformed one throws ``InvalidEntry``. `forwardedField` is the one family of forwarding
    /// fields those proxies set (``ForwardedField``).
    public init(_ entries: [String], forwardedField: ForwardedField = .xForwardedFor) throws(InvalidEntry) {
        self.forwardedField = forwardedField
        var blocks: [Block] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddress(String(parts[0])) else {
                throw InvalidEntry(description: "trustedProxies: \(entry) is not an IP address or CIDR block")
            }
            let maximum = address.bytes.count * 8
            var length = maximum
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...maximum).contains(given) else {
                    throw InvalidEntry(description: "trustedProxies: \(entry) has an invalid prefix length")
                }
                length = given
            }
            blocks.append(Block(address: address, prefixLength: length))
        }
        self.blocks = blocks
    }

    /// Whether `address` (the peer's IP address as text) is one of the trusted proxies.
    public func contains(_ address: String?) -> Bool {
        guard !blocks.isEmpty, let address, let parsed = IPAddress(address) else { return false }
        return blocks.contains { $0.contains(parsed) }
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address; IPv4-mapped IPv6 addresses are read as IPv4.
package struct IPAddress: Sendable, Equatable {
    package let bytes: [UInt8]

    package init?(_ text: String) {
        var trimmed = Substring(text)
        if trimmed.hasPrefix("["), trimmed.hasSuffix("]") { trimmed = trimmed.dropFirst().dropLast() }
        // A zone (`fe80::1%eth0`) names an interface, not an address.
        if let percent = trimmed.firstIndex(of: "%") { trimmed = trimmed[..<percent] }
        let value = String(trimmed)
        var v4 = in_addr()
        if inet_pton(AF_INET, value, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, value, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        if all[0..<10].allSatisfy({ $0 == 0 }), all[10] == 0xFF, all[11] == 0xFF {
            bytes = Array(all[12...])
        } else {
            bytes = all
        }
    }
}
