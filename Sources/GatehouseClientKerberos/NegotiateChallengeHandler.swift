import CGSSAPI
public import Foundation
public import GatehouseClient
import GatehouseProtocol

/// Why no SPNEGO token could be made.
public struct KerberosInitiatorError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Makes SPNEGO initial context tokens (RFC 4559, RFC 4178) from the user's Kerberos tickets, through MIT
/// Kerberos' GSS-API (`libgssapi_krb5`).
///
/// The tickets come from a credential cache: the default one (`KRB5CCNAME`, then krb5.conf's
/// `default_ccache_name`, as `kinit` fills it) or the one given. The first token for a service asks the KDC for
/// a service ticket, which MIT stores in the cache: later tokens for the same service are local work (one
/// authenticator, no KDC round). Each token comes from a context of its own (never reused: the service's replay
/// cache would refuse it).
public struct KerberosInitiator: Sendable {
    /// The credential cache, e.g. `FILE:/tmp/krb5cc_1000` (`nil`: the default).
    public let credentialCache: String?

    public init(credentialCache: String? = nil) {
        self.credentialCache = credentialCache
    }

    /// The service a URL's host is: `HTTP@host` (GSS host-based name; krb5.conf maps it to `HTTP/host@REALM`).
    public static func service(for url: URL) -> String {
        "HTTP@\(url.host ?? "localhost")"
    }

    /// A SPNEGO token for `service`: a host-based name (`HTTP@host`) or a Kerberos principal
    /// (`HTTP/host@REALM`, anything with a `/`). Blocking (it may ask the KDC): call it off the event loops,
    /// as ``token(for:)`` does.
    public func blockingToken(for service: String) throws(KerberosInitiatorError) -> Data {
        var minor: OM_uint32 = 0
        var name: gss_name_t?
        var bytes = Array(service.utf8)
        let nameType = service.contains("/") ? gatehouse_gss_nt_krb5_principal() : gatehouse_gss_nt_hostbased_service()
        let imported = bytes.withUnsafeMutableBytes { raw in
            var buffer = gss_buffer_desc(length: raw.count, value: raw.baseAddress)
            return gss_import_name(&minor, &buffer, nameType, &name)
        }
        if gatehouse_gss_error(imported) != 0 { throw Self.failure("the service name \(service)", imported, minor) }
        defer { gss_release_name(&minor, &name) }

        var credential: gss_cred_id_t?
        defer { if credential != nil { gss_release_cred(&minor, &credential) } }
        if let credentialCache {
            let acquired = "ccache".withCString { key in
                credentialCache.withCString { value in
                    var element = gss_key_value_element_desc(key: key, value: value)
                    return withUnsafeMutablePointer(to: &element) { element in
                        var store = gss_key_value_set_desc(count: 1, elements: element)
                        return gss_acquire_cred_from(&minor, nil, 0xFFFF_FFFF, nil, Int32(GSS_C_INITIATE), &store, &credential, nil, nil)
                    }
                }
            }
            if gatehouse_gss_error(acquired) != 0 { throw Self.failure("the tickets of \(credentialCache)", acquired, minor) }
        }

        var context: gss_ctx_id_t?
        var output = gss_buffer_desc()
        defer {
            var ignored: OM_uint32 = 0
            if context != nil { gss_delete_sec_context(&ignored, &context, nil) }
            gss_release_buffer(&ignored, &output)
        }
        let major = gss_init_sec_context(&minor, credential, &context, name, gatehouse_gss_mech_spnego(), 0, 0xFFFF_FFFF,
                                         nil, nil, nil, &output, nil, nil)
        if gatehouse_gss_error(major) != 0 { throw Self.failure("a token for \(service)", major, minor) }
        guard output.length > 0, let value = output.value else { throw KerberosInitiatorError("GSS-API made an empty token for \(service)") }
        return Data(bytes: value, count: output.length)
    }

    /// A SPNEGO token for `service`, made on a thread of its own (GSS-API blocks while it asks the KDC; MIT's
    /// own timeouts bound it).
    public func token(for service: String) async throws(KerberosInitiatorError) -> Data {
        let result: Result<Data, KerberosInitiatorError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(KerberosInitiatorError) {
                    continuation.resume(returning: .success(try blockingToken(for: service)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.name = "gatehouse-gssapi"
            thread.start()
        }
        return try result.get()
    }

    static func failure(_ what: String, _ major: OM_uint32, _ minor: OM_uint32) -> KerberosInitiatorError {
        var parts: [String] = []
        for (code, type) in [(major, Int32(GSS_C_GSS_CODE)), (minor, Int32(GSS_C_MECH_CODE))] where code != 0 {
            var more: OM_uint32 = 0
            repeat {
                var ignored: OM_uint32 = 0
                var buffer = gss_buffer_desc()
                if gatehouse_gss_error(gss_display_status(&ignored, code, type, nil, &more, &buffer)) != 0 { break }
                if let value = buffer.value {
                    parts.append(String(decoding: UnsafeRawBufferPointer(start: value, count: buffer.length), as: UTF8.self))
                }
                gss_release_buffer(&ignored, &buffer)
            } while more != 0
        }
        return KerberosInitiatorError("no Kerberos credentials for \(what): \(parts.joined(separator: "; "))")
    }
}

/// Answers `Negotiate` and `Application Negotiate` challenges (KAAZING `NegotiateChallengeHandler`, reference
/// §4.5) with `Authorization: Negotiate <base64 SPNEGO token>` made from the user's Kerberos tickets. Use it alone
/// or inside a `DispatchChallengeHandler`, over HTTP (`GatewayHTTPClient`) or a WebSocket handshake.
///
/// Without a ticket (no `kinit`, expired, no cache) it gives up at once: the request fails with
/// `cancelled`, with the Kerberos failure as its `GatewayClientError.underlying` cause
/// (and in ``lastFailure``). A refused token is tried
/// again with a fresh one up to the loop's retry limit.
///
/// It lives in `GatehouseClientKerberos`, not in `GatehouseClient`: the SDK's core stays Foundation and
/// swift-crypto only (Apple platforms have their own GSS framework), and `GatehouseClientNIO` users need not
/// install `libkrb5-dev`; only this small module links MIT's `libgssapi_krb5`.
public final class NegotiateChallengeHandler: HTTPChallengeHandler {
    private let initiator: KerberosInitiator
    private let service: (@Sendable (URL) -> String)?
    private let failure = Locked<KerberosInitiatorError?>(nil)

    /// - Parameters:
    ///   - credentialCache: the ticket cache (`nil`: the default one, as `kinit` fills it).
    ///   - service: the service of a challenged URL; `HTTP@<host>` by default.
    public init(credentialCache: String? = nil, service: (@Sendable (URL) -> String)? = nil) {
        initiator = KerberosInitiator(credentialCache: credentialCache)
        self.service = service
    }

    /// Why the last challenge could not be answered, if it could not.
    public var lastFailure: KerberosInitiatorError? { failure.withLock { $0 } }

    public func canHandle(_ request: ChallengeRequest) -> Bool {
        request.authenticationScheme.caseInsensitiveCompare("Negotiate") == .orderedSame
    }

    public func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        try? await respond(to: request)
    }

    /// The answer; throws the ``KerberosInitiatorError`` when there is no ticket (kept as the request's cause).
    public func respond(to request: ChallengeRequest) async throws -> ChallengeResponse? {
        let target = service?(request.location) ?? KerberosInitiator.service(for: request.location)
        do {
            let token = try await initiator.token(for: target)
            failure.withLock { $0 = nil }
            return ChallengeResponse(credentials: "Negotiate \(token.base64EncodedString())", nextChallengeHandler: self)
        } catch {
            failure.withLock { $0 = error }
            throw error
        }
    }
}
