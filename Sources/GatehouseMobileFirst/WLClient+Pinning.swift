import Foundation
import GatehouseClient
import GatehouseProtocol

extension WLClient {
    /// Pins the server's public key to the one in `certificateFilename`, a certificate (DER, as MobileFirst takes it,
    /// or PEM) among the app's resources — `Bundle.main`, as MobileFirst looks it up — or at that path: from then on
    /// the SDK talks only to a server whose certificate carries that key, after the system's usual checks, and a
    /// server with another key gets nothing (the call fails before the request leaves).
    ///
    /// Call it before the first request, as MobileFirst's documentation says. Where MobileFirst raises an exception (a
    /// file that is missing or not a certificate), every request fails here with a ``WLError`` that says why: the app
    /// asked for a pin, so nothing is sent without one. On Linux, Foundation's URLSession cannot pin: requests fail
    /// the same way (use `PinnedHTTPTransport` of GatehouseClientNIO with the SDK there).
    public func pinTrustedCertificatePublicKey(fromFile certificateFilename: String!) {
        let name = certificateFilename ?? ""
        let pin = Self.certificatePin(named: name, in: .main)
        state.withLock { $0.pin = pin; $0.current = nil }
    }

    /// The pin of the certificate `name` names (a resource of `bundle`, or a path), or why there is none.
    static func certificatePin(named name: String, in bundle: Bundle) -> Result<PublicKeyPin, WLError> {
        let url = URL(fileURLWithPath: name)
        let path = bundle.path(forResource: url.deletingPathExtension().lastPathComponent, ofType: url.pathExtension)
            ?? (FileManager.default.fileExists(atPath: name) ? name : nil)
        guard let path, let data = FileManager.default.contents(atPath: path) else {
            return .failure(WLError(.unexpectedError, "The certificate '\(name)' to pin is not among the app's resources"))
        }
        guard let pin = PublicKeyPin(certificate: Self.der(of: data)) else {
            return .failure(WLError(.unexpectedError, "'\(name)' is not an X.509 certificate (DER or PEM)"))
        }
        return .success(pin)
    }

    /// The DER of a certificate file: the bytes themselves, or a PEM's first certificate decoded.
    static func der(of data: Data) -> Data {
        guard let text = String(data: data, encoding: .utf8), let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex) else { return data }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64)) ?? data
    }
}
