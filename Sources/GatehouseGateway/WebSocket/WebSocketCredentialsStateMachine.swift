/// When a relayed WebSocket's credentials run out, and what the gateway does then (``WebSocketBridge``): at the
/// deadline (the credentials' expiry, the realm's session timeout) a realm that revalidates gets one in-band
/// challenge and a grace period for its answer; any other realm, or an unanswered challenge, closes the connection
/// (1008 to the client, 1001 upstream). An accepted answer sets the next deadline; a refused one, or one that
/// authenticates another user, closes. Events in, decisions out, the clock passed in: tested alone
/// (`WebSocketCredentialsStateMachineTests`); the bridge sets the timer, writes the challenge and closes.
///
/// ```
///            deadline, the realm revalidates                    answer accepted (next deadline)
///  valid ───────────────────────────────────▶ challenged ───────────────────────────────────▶ valid
///    │ deadline, no revalidation                  │ grace over, answer refused, another user
///    ▼                                            ▼
///  expired ◀──────────────────────────────────────┘
/// ```
struct WebSocketCredentialsStateMachine {
    /// What the bridge does.
    enum Action: Equatable {
        /// Nothing: no deadline (credentials that never expire), or the connection already expired.
        case none
        /// Look again at this instant (set the timer).
        case wake(at: ContinuousClock.Instant)
        /// Write the in-band challenge to the client (`challenge`, the realm's `WWW-Authenticate` value) and look
        /// again at `at`, the end of the grace period.
        case challenge(String, reason: String, wakeAt: ContinuousClock.Instant)
        /// Close both sides: 1008 with `reason` to the client, 1001 (or 1000 after a failed revalidation) upstream.
        case expire(reason: String, revalidationFailed: Bool)
    }

    /// How the realm revalidates: its challenge and how long an answer may take.
    struct Revalidation: Equatable {
        let challenge: String
        let grace: Duration
    }

    private(set) var deadline: WebSocketRelay.Deadline?
    /// A challenge is out, its answer awaited.
    private(set) var challenged = false
    private(set) var expired = false
    let revalidation: Revalidation?

    init(deadline: WebSocketRelay.Deadline?, revalidation: Revalidation?) {
        self.deadline = deadline
        self.revalidation = revalidation
    }

    /// The connection is open: when to look first.
    func started() -> Action {
        guard let deadline, !expired else { return .none }
        return .wake(at: deadline.instant)
    }

    /// The timer fired at `now`.
    mutating func timerFired(now: ContinuousClock.Instant) -> Action {
        guard let current = deadline, !expired else { return .none }
        if current.instant > now { return .wake(at: current.instant) }
        if let revalidation, !challenged {
            challenged = true
            let graceEnd = now.advanced(by: revalidation.grace)
            deadline = .init(instant: graceEnd, reason: "revalidation not answered")
            return .challenge(revalidation.challenge, reason: current.reason, wakeAt: graceEnd)
        }
        expired = true
        return .expire(reason: current.reason, revalidationFailed: false)
    }

    /// The realm decided on an in-band answer; `next` is the deadline of the credentials it accepted.
    mutating func revalidated(_ outcome: WebSocketRelay.Revalidation.Outcome, next: WebSocketRelay.Deadline?) -> Action {
        guard !expired, revalidation != nil else { return .none }
        switch outcome {
        case .accepted:
            deadline = next
            challenged = false
            return started()
        case .refused:
            expired = true
            return .expire(reason: "revalidation failed", revalidationFailed: true)
        case .differentUser:
            expired = true
            return .expire(reason: "revalidation changed the user", revalidationFailed: true)
        }
    }
}
