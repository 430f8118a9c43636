import GatehouseChecks
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import Tracing

/// The client as its connection knows it: the peer's address, the `x5t#S256` of the TLS client certificate it
/// presented (when the gateway asks for them), and the trace span of the request that asked to be admitted.
struct ClientIdentity: Sendable {
    var peer: String?
    var certificate: String?
    var span: OTLPSpan?
}

/// What is asked of a service's realm: the request's fields and query, and the client that asks. Every way in — a
/// plain request, a plain WebSocket upgrade, KAAZING's extended handshake (its inner request's fields over the
/// upgrade's), the emulated transport's create — builds one and is decided by ``Gateway/admit(_:)`` (or, without
/// suspending, ``Gateway/admitNow(_:)``), so each carries the same identity: a certificate-bound token is bound on
/// every way, every admission is traced under its request, and passwords are throttled by the same client address.
struct AdmissionRequest: Sendable {
    var fields: HTTPFields
    var query: String?
    var service: ProtectedService
    var client: ClientIdentity

    init(fields: HTTPFields, query: String?, service: ProtectedService, client: ClientIdentity = ClientIdentity()) {
        self.fields = fields
        self.query = query
        self.service = service
        self.client = client
    }
}

extension Gateway {
    /// Runs the realm's login chain on `request`, with the client's address (the peer's, or a trusted proxy's
    /// forwarded one) as the request's source, by which password checks are throttled (``RequestSource``,
    /// ``SourceThrottle``) — as a child span of the request's (bcrypt runs and introspection below it) when it is
    /// traced.
    func admit(_ request: AdmissionRequest) async -> Admission {
        guard let span = request.client.span, let tracer else { return await decide(request) }
        let realm = request.service.realm?.name ?? ""
        return await withTracer(tracer) {
            await InstrumentationContext.$current.withValue(span.context) {
                await TracedWork.run("admission \(realm)", attributes: ["gatehouse.realm": .string(realm)]) {
                    await decide(request)
                }
            }
        }
    }

    /// ``admit(_:)`` when the realm decides without suspending (no realm, no credentials, or credentials its modules
    /// remember: ``Realm/decideNow(_:requiredRoles:)``), else `nil`.
    func admitNow(_ request: AdmissionRequest) -> Admission? {
        admitNowRemembering(request)?.admission
    }

    /// ``admitNow(_:)``, and the admission for the connection to remember when it may (``RememberedAdmission``).
    func admitNowRemembering(_ request: AdmissionRequest) -> (admission: Admission, remembered: RememberedAdmission?)? {
        let service = request.service
        guard let realm = service.realm else { return (.allow(nil), nil) }
        // Read before the chain looks at the accounts: a password failing after this makes the memory useless.
        let failures = UnsettledAccounts.shared.failures
        var credentials = credentials(of: request, realm: realm)
        // The on-loop answer for a remembered password holds only while the client's address is known unlocked.
        if let peer = request.client.peer { credentials.clientAddress = trustedProxies.client(peer: peer, fields: request.fields).address }
        guard let (decision, until) = realm.decideRemembering(credentials, requiredRoles: service.requiredRoles) else { return nil }
        var remembered: RememberedAdmission?
        if let until, case .allow(let subject) = decision, realm.readsAuthorizationOnly, let authorization = request.fields.value(of: .authorization) {
            remembered = RememberedAdmission(service: service, authorization: authorization, subject: subject, until: until, failures: failures,
                                             tally: statistics.tally(realm: realm.name))
        }
        return (admission(decision, realm: realm, credentials: credentials), remembered)
    }

    /// The realm's decision on a task.
    private func decide(_ request: AdmissionRequest) async -> Admission {
        guard let realm = request.service.realm else { return .allow(nil) }
        let credentials = credentials(of: request, realm: realm)
        let client = trustedProxies.client(peer: request.client.peer, fields: request.fields).address
        let decision = await RequestSource.$address.withValue(client) {
            await realm.decide(credentials, requiredRoles: request.service.requiredRoles)
        }
        return admission(decision, realm: realm, credentials: credentials)
    }

    /// The realm's credentials from the request, with the client's certificate.
    private func credentials(of request: AdmissionRequest, realm: Realm) -> Credentials {
        var credentials = realm.credentials(headers: request.fields, query: request.query)
        credentials.certificateThumbprint = request.client.certificate
        return credentials
    }
}
