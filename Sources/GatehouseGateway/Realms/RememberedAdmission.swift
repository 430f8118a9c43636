import Foundation
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes

/// A connection's last admission by remembered credentials, so that a client sending the same `Authorization`
/// with every request of a keep-alive connection is admitted again by comparing that value, not by parsing it and
/// looking it up (`Basic`: base64, an HMAC fingerprint of the pair, the lockout check — a tenth of a relayed
/// request's CPU; a token: hashing it for the verifier's cache, its scope's roles).
///
/// Made by ``Gateway/admitNowRemembering(_:)`` only when every login module the realm's chain ran
/// can tell how long its remembered answer holds (``RememberingLoginModule``: ``UsersLoginModule``,
/// ``GatehouseTokenLoginModule``), the decision is `allow`, and the realm reads its credentials from `Authorization`
/// alone. It admits a later request only when all of these hold:
/// - the same service (so the same realm and required roles);
/// - the same `Authorization` bytes (compared in constant time: a proxy may carry several users' requests on one
///   connection);
/// - no password has failed anywhere since it was made (``UnsettledAccounts/failures``): a failure may be the
///   start of a lockout, and the chain then checks the account again;
/// - the modules' answers still hold: a pair's verified lifetime (``VerifiedPasswordCache``; after it, bcrypt
///   verifies it again), a token verifier's memory of the token (made only when it lasts until the token expires);
/// - the subject has not expired (a token's expiry, read on the wall clock as the realm reads it).
///
/// It lives in ``GatewayHTTPHandler``, so it ends with the connection; it holds the `Authorization` value as the
/// request's own fields did.
final class RememberedAdmission: Sendable {
    let service: ProtectedService
    let authorization: String
    let subject: Subject
    let until: ContinuousClock.Instant
    let failures: UInt64
    /// Where a readmission is counted (the realm's), if anywhere.
    let tally: GatewayStatistics.RealmTally?

    /// A class: the handler reads it for every request, and a copy of its fields would retain each of them.
    init(service: ProtectedService, authorization: String, subject: Subject, until: ContinuousClock.Instant, failures: UInt64,
         tally: GatewayStatistics.RealmTally? = nil) {
        self.tally = tally
        self.service = service
        self.authorization = authorization
        self.subject = subject
        self.until = until
        self.failures = failures
    }

    /// Whether a request to `service` with `headers` is admitted again as ``subject`` (at `now`, the present when `nil`).
    func admits(_ headers: HTTPFields, to service: ProtectedService, now: ContinuousClock.Instant? = nil) -> Bool {
        admits(authorization: headers.value(of: .authorization), to: service, now: now)
    }

    /// Whether a request to `service` whose `Authorization` is `given` (its fields joined as ``HTTPFields`` joins them)
    /// is admitted again as ``subject``.
    func admits(authorization given: String?, to service: ProtectedService, now: ContinuousClock.Instant? = nil) -> Bool {
        guard let given, ConstantTime.sameBytes(given, authorization) else { return false }
        return holds(for: service, now: now)
    }

    /// Whether the memory still admits a request to `service` whose `Authorization` is known to be ``authorization``.
    func holds(for service: ProtectedService, now: ContinuousClock.Instant? = nil) -> Bool {
        guard service === self.service, UnsettledAccounts.shared.failures == failures else { return false }
        if let expiry = subject.expiresAt, expiry <= Date() { return false }
        return (now ?? .now) < until
    }
}
