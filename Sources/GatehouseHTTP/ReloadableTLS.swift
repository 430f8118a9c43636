import Foundation
public import NIOCore
public import NIOSSL
public import Logging
import Synchronization
import UnixSignals

/// A server's TLS certificate chain and private key, read from PEM files and read again on demand (SIGHUP)
/// without dropping a connection: every new handshake takes the material current at that moment, connections
/// already open keep theirs.
///
/// Only TLS 1.2 and 1.3; under TLS 1.2 only forward-secret AEAD suites (ECDHE with AES-GCM or ChaCha20-Poly1305).
public final class ReloadableTLS: Sendable {
    /// The certificate chain file (PEM, leaf first).
    public let certificatePath: String
    /// The private key file (PEM).
    public let keyPath: String
    private let material: Mutex<Material>

    struct Material: @unchecked Sendable {   // NIOSSL's sources are immutable values
        var chain: [NIOSSLCertificateSource]
        var key: NIOSSLPrivateKeySource
    }

    /// Why TLS material could not be used.
    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads both files; throws a ``LoadError`` naming the file when one is missing or not PEM.
    public init(certificatePath: String, keyPath: String) throws {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        material = Mutex(try Self.load(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// Reads both files again; on any error the material in use stays as it was.
    public func reload() throws {
        let fresh = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        material.withLock { $0 = fresh }
    }

    /// The server configuration: the current material for each handshake, TLS 1.2+, modern suites, and `h2`
    /// then `http/1.1` by ALPN when `http2` is true.
    public func serverConfiguration(http2: Bool = true) -> TLSConfiguration {
        let current = material.withLock { $0 }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: current.chain, privateKey: current.key)
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuiteValues = Self.tls12Suites
        configuration.applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        configuration.sslContextCallback = { [self] _, promise in
            let now = self.material.withLock { $0 }
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = now.chain
            override.privateKey = now.key
            promise.succeed(override)
        }
        return configuration
    }

    /// ``serverConfiguration(http2:)``, asking for an optional client certificate when `clientCertificates`; with
    /// ``acceptAnyClientCertificate`` as the handshake's verification.
    public func serverConfiguration(http2: Bool = true, clientCertificates: Bool) -> TLSConfiguration {
        var configuration = serverConfiguration(http2: http2)
        if clientCertificates {
            configuration.certificateVerification = .optionalVerification
            configuration.trustRoots = .certificates([])
        }
        return configuration
    }

    /// The handshake's verification of a client certificate when one is asked for: any is accepted (the handshake
    /// itself proves the client holds its key); what it proves is decided per request.
    public static let acceptAnyClientCertificate: @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResult>) -> Void = { _, verdict in
        verdict.succeed(.certificateVerified)
    }

    /// Forward-secret AEAD suites for TLS 1.2 (TLS 1.3's own suites are always on).
    static let tls12Suites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    private static func load(certificatePath: String, keyPath: String) throws -> Material {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw LoadError(description: "\(certificatePath): not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw LoadError(description: "\(certificatePath): no certificate in the file") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw LoadError(description: "\(keyPath): not a readable PEM private key (\(error))")
        }
        return Material(chain: chain.map { .certificate($0) }, key: .privateKey(key))
    }
}

extension ReloadableTLS {
    /// Reads the files again at every SIGHUP for as long as the returned task runs; a failed read is logged
    /// and the material in use kept.
    public func reloadOnHangup(logger: Logger) -> Task<Void, Never> {
        Task { [self] in
            for await _ in await UnixSignalsSequence(trapping: .sighup) {
                do {
                    try reload()
                    logger.notice("Reloaded the TLS certificate \(certificatePath) and key \(keyPath); new connections use them")
                } catch {
                    logger.error("SIGHUP: kept the TLS material in use: \(error)")
                }
            }
        }
    }
}
