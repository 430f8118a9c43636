import GatehouseProtocol

/// Everything that can go wrong in the client SDK.
///
/// Every asynchronous API of the SDK throws this type only, so a `catch` can switch over it exhaustively.
public enum GatehouseClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The app cancelled the challenge of `securityCheck` (its handler called `cancel()`), or a request that was
    /// waiting for that handler when it was cancelled.
    case challengeCancelled(securityCheck: String)
    /// The challenge of `securityCheck` was neither answered nor cancelled within the client's
    /// ``ClientConfiguration/challengeTimeout``; requests that were waiting for it fail the same way.
    case challengeTimedOut(securityCheck: String)
    /// The server challenged for a security check no handler is registered for.
    case missingChallengeHandler(securityCheck: String)
    /// A security check failed (HTTP 403 from pre-authorization), for instance `{"PinCodeAttempts":{"failure":"Account blocked"}}`
    /// after the last wrong answer. The payload is the server's `failures` object, by check name.
    case securityCheckFailed(failures: JSONObject)
    /// The authorization sequence could not produce a usable token (no code issued, too many retries of a
    /// resource request, and so on).
    case authorizationFailed(String)
    /// The server refused to register the client.
    case registrationFailed(status: Int, errorCode: String?, message: String?)
    /// The server answered in a way the SDK does not expect, with its status and, when the body is a MobileFirst
    /// error, its `errorCode` and `errorMsg`.
    case serverError(status: Int, errorCode: String?, message: String?)
    /// The server kept answering `409 MFP-Conflict`.
    case conflict
    /// The request did not complete in time.
    case timedOut(url: String)
    /// The server could not be reached, or the connection failed.
    case transport(String)
    /// The key store could not be read or written.
    case keyStore(String)
    /// A handler is already registered for this security check (register each handler once).
    case duplicateChallengeHandler(securityCheck: String)
    /// An argument is not usable (an URL that cannot be built, a body that cannot be encoded, ...).
    case invalidArgument(String)

    /// Whether this is the server's `400 {"errorCode":"INVALID_CLIENT_ID"}`: the server does not know the client.
    public var isInvalidClientID: Bool {
        if case .serverError(400, "INVALID_CLIENT_ID", _) = self { return true }
        return false
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .challengeCancelled(let check): "The challenge of \(check) was cancelled."
        case .challengeTimedOut(let check): "The challenge of \(check) was not answered in time."
        case .missingChallengeHandler(let check): "Missing challenge handler for security check \(check)."
        case .securityCheckFailed(let failures):
            "Security check failure: " + failures.map { "\($0.key): \($0.value["failure"]?.stringValue ?? "\($0.value)")" }.sorted().joined(separator: ", ")
        case .authorizationFailed(let message): "Authorization failed: \(message)"
        case .registrationFailed(let status, let code, let message):
            "Registration failed (HTTP \(status)\(code.map { " \($0)" } ?? ""))\(message.map { ": \($0)" } ?? "")"
        case .serverError(let status, let code, let message):
            "Server answered HTTP \(status)\(code.map { " \($0)" } ?? "")\(message.map { ": \($0)" } ?? "")"
        case .conflict: "The server kept answering 409 MFP-Conflict."
        case .timedOut(let url): "The request to \(url) timed out."
        case .transport(let message): "Network error: \(message)"
        case .keyStore(let message): "Key store error: \(message)"
        case .duplicateChallengeHandler(let check): "A challenge handler is already registered for \(check)."
        case .invalidArgument(let message): "Invalid argument: \(message)"
        }
    }
}
