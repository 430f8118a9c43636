import Foundation
import GatehouseResourceServer
import NIOSSL
import GatehouseProtocol
import X509

/// The certificate authorities whose TLS client certificates identify confidential clients registered for
/// `tls_client_auth` (RFC 8705 §2.1): a PEM bundle (`serve --tls-client-ca`) of roots (self-signed) and the
/// intermediates between them and the clients' certificates, which the clients need not send.
///
/// The TLS layer accepts any client certificate (a self-signed one may be registered by its thumbprint:
/// `self_signed_tls_client_auth`); the chain of a certificate that claims a `tls_client_auth` client is validated
/// here, by swift-certificates' RFC 5280 verifier, when that client asks for a token.
public struct ClientCertificateAuthorities: Sendable {
    let roots: [Certificate]
    let intermediates: [Certificate]

    /// Why the bundle cannot be used.
    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads the bundle at `path`.
    public init(pemFile path: String) throws {
        guard FileManager.default.isReadableFile(atPath: path) else { throw LoadError(description: "\(path): cannot be read") }
        let certificates: [Certificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path).map { try Certificate(derEncoded: try $0.toDERBytes()) }
        } catch {
            throw LoadError(description: "\(path): not a PEM bundle of certificates (\(error))")
        }
        roots = certificates.filter { $0.issuer == $0.subject }
        intermediates = certificates.filter { $0.issuer != $0.subject }
        guard !roots.isEmpty else { throw LoadError(description: "\(path): holds no root (self-signed) certificate") }
    }

    /// Whether `presented` chains to one of the roots, valid now.
    func issued(_ presented: Certificate) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(validationTime: Date()) }
        if case .validCertificate = await verifier.validate(leafCertificate: presented, intermediates: CertificateStore(intermediates)) {
            return true
        }
        return false
    }

    /// A distinguished name as RFC 4514 writes it, with attribute types in capitals: what `tlsClientAuthSubjectDN` is
    /// compared with (`openssl x509 -noout -subject -nameopt RFC2253` prints the same).
    static func normalized(_ name: String) -> String {
        name.split(separator: ",").map { part in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            return part[..<equals].trimmingCharacters(in: .whitespaces).uppercased() + "=" + part[part.index(after: equals)...]
        }.joined(separator: ",")
    }
}

/// How a confidential client authenticated by its TLS certificate is known (RFC 8705 §2).
public enum CertificateAuthentication: Sendable, Equatable {
    /// `tls_client_auth`: a certificate from one of the ``ClientCertificateAuthorities`` with this subject (RFC 4514).
    case subject(String)
    /// `self_signed_tls_client_auth`: exactly the certificate with this `x5t#S256`.
    case thumbprint(String)

    /// Whether `presented` is this client's certificate.
    func matches(_ presented: PresentedCertificate, authorities: ClientCertificateAuthorities?) async -> Bool {
        switch self {
        case .thumbprint(let thumbprint):
            return ConstantTime.equals(presented.thumbprint, thumbprint)
        case .subject(let subject):
            guard let authorities, let certificate = try? Certificate(derEncoded: presented.der),
                  ClientCertificateAuthorities.normalized(certificate.subject.description) == ClientCertificateAuthorities.normalized(subject)
            else { return false }
            return await authorities.issued(certificate)
        }
    }
}
