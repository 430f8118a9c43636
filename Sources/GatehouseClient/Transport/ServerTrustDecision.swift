package import Foundation
package import GatehouseProtocol

/// What a `URLSessionTransport` does with a server's trust: the logic of its Apple-only delegate method
/// (`URLSessionTransportDelegate+ServerTrust.swift`), decided here from what `SecTrust` hands over, so that it is tested
/// on Linux too.
///
/// With no pins, the system's evaluation decides as usual. With pins, the chain must first be trusted (roots, host
/// name, validity), then the server's own certificate (the chain's first) must carry one of the pinned public keys —
/// as `PinnedHTTPTransport` does over SwiftNIO.
package enum ServerTrustDecision: Equatable, Sendable {
    /// No pins: the system's evaluation alone.
    case performDefaultHandling
    /// Trusted and pinned: answer with the trust.
    case useTrust
    /// Refused, and why (the connection is cancelled before a byte of the request leaves).
    case cancel(reason: String)

    /// The decision for `chain` (DER certificates, the server's first), which the system's evaluation trusted or not.
    package init(pins: Set<PublicKeyPin>, evaluated: Bool, chain: [Data]) {
        guard !pins.isEmpty else {
            self = .performDefaultHandling
            return
        }
        guard evaluated else {
            self = .cancel(reason: "the server's certificate is not trusted")
            return
        }
        guard let leaf = chain.first, let pin = PublicKeyPin(certificate: leaf) else {
            self = .cancel(reason: "the server sent no certificate whose public key can be read")
            return
        }
        self = pins.contains(pin) ? .useTrust : .cancel(reason: "the server's public key is not pinned (\(pin))")
    }
}
