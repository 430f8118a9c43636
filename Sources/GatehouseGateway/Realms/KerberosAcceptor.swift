import CGSSAPI
public import Foundation

/// A GSS-API failure, with MIT Kerberos' own words for it.
public struct GSSFailure: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ operation: String, major: OM_uint32, minor: OM_uint32) {
        description = "\(operation): \(GSSFailure.text(major: major, minor: minor))"
    }

    /// `gss_display_status` of the major and the mechanism's minor status.
    static func text(major: OM_uint32, minor: OM_uint32) -> String {
        var parts: [String] = []
        for (code, type) in [(major, Int32(GSS_C_GSS_CODE)), (minor, Int32(GSS_C_MECH_CODE))] where code != 0 {
            var context: OM_uint32 = 0
            repeat {
                var ignored: OM_uint32 = 0
                var buffer = gss_buffer_desc()
                let status = gss_display_status(&ignored, code, type, nil, &context, &buffer)
                if gatehouse_gss_error(status) != 0 { break }
                if let value = buffer.value {
                    parts.append(String(decoding: UnsafeRawBufferPointer(start: value, count: buffer.length), as: UTF8.self))
                }
                gss_release_buffer(&ignored, &buffer)
            } while context != 0
        }
        return parts.isEmpty ? "GSS-API status \(major)/\(minor)" : parts.joined(separator: "; ")
    }
}

/// Accepts SPNEGO (or raw Kerberos 5) initial context tokens with a service's keys, through MIT Kerberos'
/// GSS-API (`libgssapi_krb5`): no Kerberos of our own.
///
/// The acceptor credential is acquired once, from `keytab` (`gss_acquire_cred_from` with a `keytab` credential
/// store, so the process' `KRB5_KTNAME` is left alone) for `servicePrincipal` — then a ticket for any other
/// service is refused — or for any key of the keytab when it is `nil`. Each token gets a context of its own,
/// deleted after the one round: MIT's replay cache refuses a token seen before, and nothing is cached here (a
/// cached token would be a replay). MIT's credential handles lock themselves, so concurrent accepts are safe.
public final class KerberosAcceptor: @unchecked Sendable {
    private let credential: gss_cred_id_t?

    /// What an accepted token established.
    public struct Accepted: Sendable, Equatable {
        /// The client's principal, e.g. `alice@EXAMPLE.COM`.
        public var principal: String
        /// The mutual-authentication token to return (`WWW-Authenticate: Negotiate <base64>`), if GSS produced one.
        public var responseToken: Data?
        /// How long the context (the client's service ticket) stays valid.
        public var lifetime: TimeInterval?
    }

    /// - Parameters:
    ///   - keytab: the keytab file; `nil` = MIT's default (`KRB5_KTNAME`, then `default_keytab_name`).
    ///   - servicePrincipal: e.g. `HTTP/gateway.example.com@EXAMPLE.COM`; `nil` = any principal of the keytab.
    public init(keytab: String?, servicePrincipal: String?) throws {
        var minor: OM_uint32 = 0
        var name: gss_name_t?
        if let servicePrincipal {
            var bytes = Array(servicePrincipal.utf8)
            let major = bytes.withUnsafeMutableBytes { raw in
                var buffer = gss_buffer_desc(length: raw.count, value: raw.baseAddress)
                return gss_import_name(&minor, &buffer, gatehouse_gss_nt_krb5_principal(), &name)
            }
            if gatehouse_gss_error(major) != 0 { throw GSSFailure("service principal \(servicePrincipal)", major: major, minor: minor) }
        }
        defer { if name != nil { gss_release_name(&minor, &name) } }
        if let keytab, !FileManager.default.isReadableFile(atPath: keytab) {
            throw GSSFailure(description: "keytab \(keytab) cannot be read")
        }
        var credential: gss_cred_id_t?
        let major: OM_uint32
        if let keytab {
            major = "keytab".withCString { key in
                keytab.withCString { value in
                    var element = gss_key_value_element_desc(key: key, value: value)
                    return withUnsafeMutablePointer(to: &element) { element in
                        var store = gss_key_value_set_desc(count: 1, elements: element)
                        return gss_acquire_cred_from(&minor, name, 0xFFFF_FFFF, nil, Int32(GSS_C_ACCEPT), &store, &credential, nil, nil)
                    }
                }
            }
        } else {
            major = gss_acquire_cred(&minor, name, 0xFFFF_FFFF, nil, Int32(GSS_C_ACCEPT), &credential, nil, nil)
        }
        if gatehouse_gss_error(major) != 0 {
            throw GSSFailure("acceptor credential of \(servicePrincipal ?? "the keytab") from \(keytab ?? "the default keytab")", major: major, minor: minor)
        }
        self.credential = credential
    }

    deinit {
        var minor: OM_uint32 = 0
        var credential = credential
        if credential != nil { gss_release_cred(&minor, &credential) }
    }

    /// Accepts one client token (the decoded `Authorization: Negotiate` value). A token that needs another round
    /// (a SPNEGO negotiation whose optimistic mechanism is not Kerberos) is refused: every Kerberos client sends
    /// a Kerberos token first.
    public func accept(_ token: Data) throws(GSSFailure) -> Accepted {
        var minor: OM_uint32 = 0
        var context: gss_ctx_id_t?
        var source: gss_name_t?
        var output = gss_buffer_desc()
        var lifetime: OM_uint32 = 0
        var bytes = [UInt8](token)
        let major = bytes.withUnsafeMutableBytes { raw in
            var input = gss_buffer_desc(length: raw.count, value: raw.baseAddress)
            return gss_accept_sec_context(&minor, &context, credential, &input, nil, &source, nil, &output, nil, &lifetime, nil)
        }
        defer {
            var ignored: OM_uint32 = 0
            if context != nil { gss_delete_sec_context(&ignored, &context, nil) }
            if source != nil { gss_release_name(&ignored, &source) }
            gss_release_buffer(&ignored, &output)
        }
        if gatehouse_gss_error(major) != 0 { throw GSSFailure("accepting the token", major: major, minor: minor) }
        if major & gatehouse_gss_continue_needed() != 0 {
            throw GSSFailure(description: "the token needs another round (a mechanism other than Kerberos 5 first)")
        }
        var nameBuffer = gss_buffer_desc()
        let displayed = gss_display_name(&minor, source, &nameBuffer, nil)
        defer { gss_release_buffer(&minor, &nameBuffer) }
        guard gatehouse_gss_error(displayed) == 0, let value = nameBuffer.value else {
            throw GSSFailure("naming the client", major: displayed, minor: minor)
        }
        let principal = String(decoding: UnsafeRawBufferPointer(start: value, count: nameBuffer.length), as: UTF8.self)
        let response = output.length > 0 && output.value != nil ? Data(bytes: output.value!, count: output.length) : nil
        return Accepted(principal: principal, responseToken: response, lifetime: lifetime == 0xFFFF_FFFF ? nil : TimeInterval(lifetime))
    }
}

extension GSSFailure {
    init(description: String) { self.description = description }
}
