/// Whether a host name or address is this machine only (`localhost`, `127.0.0.0/8`, `::1`): where plain HTTP and
/// a database without TLS are acceptable.
package enum LoopbackHost {
    package static func contains(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
