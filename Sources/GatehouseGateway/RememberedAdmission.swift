import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes

/// A connection's last admission by remembered `Basic` credentials, so that a client sending the same
/// `Authorization` with every request of a keep-alive connection is admitted again by comparing that value, not
/// by decoding it, fingerprinting the pair and looking it up (a tenth of a relayed request's CPU).
///
/// Made by ``Gateway/admitNowRemembering(headers:query:to:)`` only when every login module the realm's chain ran is
/// a ``UsersLoginModule`` answering from memory, the decision is `allow` without an expiry of its own, and the
/// realm reads its credentials from `Authorization` alone. It admits a later request only when all of these hold:
/// - the same service (so the same realm and required roles);
/// - the same `Authorization` bytes (compared in constant time: a proxy may carry several users' requests on one
///   connection);
/// - no password has failed anywhere since it was made (``UnsettledAccounts/failures``): a failure may be the
///   start of a lockout, and the chain then checks the account again;
/// - the pair's verified lifetime has not ended (``VerifiedPasswordCache``): after it, bcrypt verifies it again.
///
/// It lives in ``GatewayHTTPHandler``, so it ends with the connection; it holds the `Authorization` value as the
/// request's own fields did.
struct RememberedAdmission {
    let service: ProtectedService
    let authorization: String
    let subject: Subject
    let until: ContinuousClock.Instant
    let failures: UInt64

    /// Whether a request to `service` with `headers` is admitted again as ``subject`` (at `now`, the present when `nil`).
    func admits(_ headers: HTTPFields, to service: ProtectedService, now: ContinuousClock.Instant? = nil) -> Bool {
        guard service === self.service, let given = headers.value(of: .authorization),
              ConstantTime.sameBytes(given, authorization),
              UnsettledAccounts.shared.failures == failures
        else { return false }
        return (now ?? .now) < until
    }
}
