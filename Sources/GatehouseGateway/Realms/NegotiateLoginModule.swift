import Foundation
import NIOPosix
import NIOCore

/// Accepts `Authorization: Negotiate <base64 SPNEGO token>` (RFC 4559) with the service's keytab — the KAAZING
/// `kerberos5` + `gss` modules in one — and maps the client's Kerberos principal to a user and roles.
///
/// The roles come from `principalRoles`, looked up by the full principal (`alice@EXAMPLE.COM`), then by its
/// name without the realm (`alice`), then by `*`; a principal in none of them is authenticated with no roles
/// (a service that requires a role answers it `403`). The subject's name is the full principal; it expires with
/// the client's service ticket. On success the acceptor's mutual-authentication token goes back in
/// `WWW-Authenticate: Negotiate <token>`.
///
/// Any other `Authorization` scheme is ignored (another module of the chain may take it); a missing, malformed or
/// refused token (expired ticket, ticket for another service, replay, wrong key) is a failure, which the realm
/// answers with its `401` challenge.
public struct NegotiateLoginModule: LoginModule {
    let acceptor: KerberosAcceptor
    let principalRoles: [String: [String]]

    /// - Parameters:
    ///   - keytab: the keytab holding the service's keys (`nil`: `KRB5_KTNAME` or krb5.conf's default).
    ///   - servicePrincipal: the only service accepted, e.g. `HTTP/gateway.example.com@EXAMPLE.COM` (`nil`: any key
    ///     of the keytab).
    ///   - principalRoles: roles by principal, short name or `*`.
    public init(keytab: String?, servicePrincipal: String?, principalRoles: [String: [String]] = [:]) throws {
        acceptor = try KerberosAcceptor(keytab: keytab, servicePrincipal: servicePrincipal)
        self.principalRoles = principalRoles
    }

    /// Where tokens are accepted: threads of their own, so that whatever else fills NIO's shared blocking pool
    /// (file I/O, a caller's long work) does not hold up logins (a test that held that pool for 6 s made a curl
    /// login time out).
    static let acceptingThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(System.coreCount, 2))
        pool.start()
        return pool
    }()

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        guard let given = credentials.scheme, given.caseInsensitiveCompare("Negotiate") == .orderedSame else {
            return credentials.isEmpty ? .failure("no Negotiate token") : .ignore
        }
        guard let value = credentials.value, let token = Data(base64Encoded: value), !token.isEmpty else {
            return .failure("malformed Negotiate token")
        }
        let accepted: KerberosAcceptor.Accepted
        do {
            // GSS-API blocks (the keytab, the replay cache): on threads of its own, never on a thread that serves I/O.
            accepted = try await Self.acceptingThreads.runIfActive { [acceptor] in try acceptor.accept(token) }
        } catch let error as GSSFailure {
            return .failure("Negotiate token refused: \(error.description)")
        } catch {
            return .failure("Negotiate token refused: the blocking pool is shut down")
        }
        return .success(Subject(
            name: accepted.principal, roles: Set(roles(of: accepted.principal)),
            expiresAt: accepted.lifetime.map { Date().addingTimeInterval($0) },
            successChallenge: accepted.responseToken.map { "Negotiate \($0.base64EncodedString())" }))
    }

    /// The configured roles of `principal`.
    func roles(of principal: String) -> [String] {
        if let roles = principalRoles[principal] { return roles }
        if let at = principal.lastIndex(of: "@"), let roles = principalRoles[String(principal[..<at])] { return roles }
        return principalRoles["*"] ?? []
    }
}
