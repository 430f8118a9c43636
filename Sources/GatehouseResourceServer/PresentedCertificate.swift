import GatehouseProtocol
public import Hummingbird
public import NIOCore
import NIOSSL

/// The TLS client certificate presented on a request's connection (RFC 8705): what a certificate-bound token is
/// checked against, and what a confidential client authenticated by certificate is known by.
public struct PresentedCertificate: Sendable {
    /// Its DER encoding.
    public let der: [UInt8]
    /// Its `x5t#S256` (`CertificateThumbprint`).
    public let thumbprint: String

    public init(der: [UInt8]) {
        self.der = der
        thumbprint = CertificateThumbprint.sha256(der: der)
    }

    /// The certificate the peer presented on `channel`'s TLS connection (its parent's, for an HTTP/2 stream); `nil`
    /// when it presented none, or the connection is not TLS.
    public static func of(_ channel: any Channel) async -> PresentedCertificate? {
        for candidate in [channel, channel.parent].compactMap({ $0 }) {
            guard let certificate = try? await candidate.nioSSL_peerCertificate().get() else { continue }
            guard let der = try? certificate.toDERBytes() else { return nil }
            return PresentedCertificate(der: der)
        }
        return nil
    }

    /// Refuses (`invalid_token`) a token bound to a certificate (`thumbprint`) unless the request's connection presented
    /// that certificate; a token bound to none passes.
    public static func check(binding thumbprint: String?, of context: some RequestContext) async throws(TokenRejection) {
        guard let thumbprint else { return }
        guard let holder = context as? any ClientCertificateRequestContext, let presented = await holder.presentedCertificate(),
              ConstantTime.equals(presented.thumbprint, thumbprint)
        else { throw .invalidToken }
    }
}

/// A request context that can tell the TLS client certificate of its connection.
public protocol ClientCertificateRequestContext: RequestContext {
    /// The certificate the client presented on the request's connection, if any.
    func presentedCertificate() async -> PresentedCertificate?
}
