public import Foundation
import GatehouseProtocol

/// Everything that can go wrong in the client SDK.
///
/// Every asynchronous API of the SDK throws this type only. It is a struct over a private set of kinds, in the
/// manner of jwt-kit's `JWTError` and Auth0.swift's errors, so that new kinds can be added without breaking
/// callers: match on ``code`` (stable, ``Code`` values) and read the details from the properties.
///
/// ```swift
/// do {
///     _ = try await client.obtainAccessToken(forScope: "accessRestricted")
/// } catch where error.code == .cancelled {
///     // the caller's task was cancelled: nothing to show
/// } catch where error.code == .transport {
///     show("Network error", error.underlying)   // the URLError, for instance
/// }
/// ```
///
/// Two errors are equal when their kinds and details are equal; ``underlying`` is not compared.
public struct GatehouseClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, extensible error code (``ErrorCode``; its values are below, as static members).
    public typealias Code = ErrorCode<GatehouseClientError>

    /// The details behind a code; private so that kinds can be added freely.
    private struct Details: Sendable, Equatable {
        var code: Code
        var securityCheck: String?
        var failures: JSONObject?
        var status: Int?
        var serverErrorCode: String?
        var message: String?
        var url: String?
    }

    private let details: Details
    /// What caused this error, when it has a cause outside the SDK: the `URLError` of a failed request, the
    /// error of a key store, the error that kept a token from being obtained, ...
    public let underlying: (any Error)?

    private init(_ details: Details, underlying: (any Error)? = nil) {
        self.details = details
        self.underlying = underlying
    }

    /// The error's code: match on it (`error.code == .challengeCancelled`, or `switch error.code`).
    public var code: Code { details.code }
    /// The security check (or gateway handler) concerned, for challenge errors.
    public var securityCheck: String? { details.securityCheck }
    /// The server's `failures` object by check name, for `securityCheckFailed`.
    public var failures: JSONObject? { details.failures }
    /// The HTTP status, for `serverError` and `registrationFailed`.
    public var status: Int? { details.status }
    /// The MobileFirst `errorCode` (or OAuth `error`) of the server's answer, if any.
    public var serverErrorCode: String? { details.serverErrorCode }
    /// A message: the server's `errorMsg`, or what the SDK found wrong.
    public var message: String? { details.message }
    /// The URL of a request that timed out; for `applicationDisabled`, where the new version is.
    public var url: String? { details.url }

    /// Compares codes and details; ``underlying`` is not compared.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.details == rhs.details }

    /// `case .challengeCancelled = error` and `case .transport:` in a `switch error`: matches the code.
    public static func ~= (code: Code, error: Self) -> Bool { error.code == code }

    // MARK: Errors

    /// The caller's task was cancelled; `underlying` is the `CancellationError` or `URLError.cancelled`.
    public static func cancelled(underlying: (any Error)? = nil) -> Self { Self(Details(code: .cancelled), underlying: underlying) }
    /// The caller's task was cancelled.
    public static var cancelled: Self { cancelled(underlying: nil) }
    /// The app cancelled the challenge of `securityCheck` (its handler called `cancel()`), or a request that was
    /// waiting for that handler when it was cancelled.
    public static func challengeCancelled(securityCheck: String) -> Self {
        Self(Details(code: .challengeCancelled, securityCheck: securityCheck))
    }
    /// The challenge of `securityCheck` was neither answered nor cancelled within the client's
    /// ``ClientConfiguration/challengeTimeout``; requests that were waiting for it fail the same way.
    public static func challengeTimedOut(securityCheck: String) -> Self {
        Self(Details(code: .challengeTimedOut, securityCheck: securityCheck))
    }
    /// The server challenged for a security check no handler is registered for.
    public static func missingChallengeHandler(securityCheck: String) -> Self {
        Self(Details(code: .missingChallengeHandler, securityCheck: securityCheck))
    }
    /// A security check failed (HTTP 403 from pre-authorization), for instance `{"PinCodeAttempts":{"failure":"Account blocked"}}`.
    public static func securityCheckFailed(failures: JSONObject) -> Self {
        Self(Details(code: .securityCheckFailed, failures: failures))
    }
    /// The application's version is disabled by its operator (MobileFirst's remote disable): ``message`` says why,
    /// ``url`` is where the new version is, when the operator gave it. No token until the app is upgraded.
    public static func applicationDisabled(message: String, downloadLink: String?) -> Self {
        Self(Details(code: .applicationDisabled, securityCheck: RemoteDisableWire.checkName, message: message, url: downloadLink))
    }
    /// The device is blocked by an operator (status `LOST`, `STOLEN` or `DISABLED`, or this application blocked on
    /// it alone): ``message`` says why, ``failures`` holds the server's failure (its `status`, and `application` when
    /// only the application is blocked). No token until an operator sets the device active again.
    public static func deviceBlocked(message: String, failure: JSONObject) -> Self {
        Self(Details(code: .deviceBlocked, securityCheck: DeviceAccessWire.failureName,
                     failures: [DeviceAccessWire.failureName: .object(failure)], message: message))
    }
    /// The authorization sequence could not produce a usable token (no code issued, too many retries, ...).
    public static func authorizationFailed(_ message: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .authorizationFailed, message: message), underlying: underlying)
    }
    /// The server refused to register the client.
    public static func registrationFailed(status: Int, errorCode: String?, message: String?) -> Self {
        Self(Details(code: .registrationFailed, status: status, serverErrorCode: errorCode, message: message))
    }
    /// The server answered in a way the SDK does not expect, with its status and, when the body is a MobileFirst
    /// error, its `errorCode` and `errorMsg`.
    public static func serverError(status: Int, errorCode: String?, message: String?) -> Self {
        Self(Details(code: .serverError, status: status, serverErrorCode: errorCode, message: message))
    }
    /// The server kept answering `409 MFP-Conflict`.
    public static var conflict: Self { Self(Details(code: .conflict)) }
    /// The request to `url` did not complete in time.
    public static func timedOut(url: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .timedOut, url: url), underlying: underlying)
    }
    /// The flows before this one (a token, a login, a logout of the same client) held the client longer than
    /// ``ClientConfiguration/flowWaitTimeout``; this one gave up waiting for its turn and sent nothing.
    public static func flowWaitTimedOut(after limit: Duration) -> Self {
        Self(Details(code: .flowWaitTimedOut, message: "another authorization flow held the client longer than \(limit)"))
    }
    /// The server could not be reached, or the connection failed; `underlying` is the transport's error.
    public static func transport(_ message: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .transport, message: message), underlying: underlying)
    }
    /// The key store could not be read or written; `underlying` is the store's error.
    public static func keyStore(_ message: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .keyStore, message: message), underlying: underlying)
    }
    /// A handler is already registered for this security check (register each handler once).
    public static func duplicateChallengeHandler(securityCheck: String) -> Self {
        Self(Details(code: .duplicateChallengeHandler, securityCheck: securityCheck))
    }
    /// An argument is not usable (an URL that cannot be built, a body that cannot be encoded, ...).
    public static func invalidArgument(_ message: String, underlying: (any Error)? = nil) -> Self {
        Self(Details(code: .invalidArgument, message: message), underlying: underlying)
    }

    /// The registration refusal for a server error (same status, code and message); other errors unchanged.
    func asRegistrationFailure() -> Self {
        guard code == .serverError else { return self }
        return .registrationFailed(status: status ?? 0, errorCode: serverErrorCode, message: message)
    }

    /// Whether this is the server's `400 {"errorCode":"INVALID_CLIENT_ID"}`: the server does not know the client.
    public var isInvalidClientID: Bool {
        code == .serverError && status == 400 && serverErrorCode == "INVALID_CLIENT_ID"
    }

    /// An underlying error for people: a URL loading error's message rather than its `NSError` dump.
    private static func words(for error: any Error) -> String {
        let bridged = error as NSError
        if bridged.domain == NSURLErrorDomain { return bridged.localizedDescription }
        return "\(error)"
    }

    /// A sentence for people.
    public var description: String {
        let check = securityCheck ?? "?"
        // The cause in words, unless the message says it already (a transport's message carries the URL error's).
        let cause = underlying.map(Self.words(for:)).flatMap { message?.contains($0) == true ? nil : " (\($0))" } ?? ""
        switch code {
        case .cancelled: return "The request was cancelled."
        case .challengeCancelled: return "The challenge of \(check) was cancelled."
        case .challengeTimedOut: return "The challenge of \(check) was not answered in time."
        case .missingChallengeHandler: return "Missing challenge handler for security check \(check)."
        case .applicationDisabled:
            return "Application disabled: \(message ?? "")" + (url.map { " (new version: \($0))" } ?? "")
        case .deviceBlocked: return "Device blocked: \(message ?? "")"
        case .securityCheckFailed:
            return "Security check failure: " + (failures ?? [:]).map { "\($0.key): \($0.value["failure"]?.stringValue ?? "\($0.value)")" }
                .sorted().joined(separator: ", ")
        case .authorizationFailed: return "Authorization failed: \(message ?? "")\(cause)"
        case .registrationFailed, .serverError:
            let what = code == .registrationFailed ? "Registration failed (HTTP" : "Server answered (HTTP"
            return "\(what) \(status ?? 0)\(serverErrorCode.map { " \($0)" } ?? ""))\(message.map { ": \($0)" } ?? "")"
        case .conflict: return "The server kept answering 409 MFP-Conflict."
        case .timedOut: return "The request to \(url ?? "?") timed out."
        case .flowWaitTimedOut: return "Gave up waiting: \(message ?? "another authorization flow held the client too long")."
        case .transport: return "Network error: \(message ?? "")\(cause)"
        case .keyStore: return "Key store error: \(message ?? "")\(cause)"
        case .duplicateChallengeHandler: return "A challenge handler is already registered for \(check)."
        case .invalidArgument: return "Invalid argument: \(message ?? "")\(cause)"
        default: return "\(code)\(message.map { ": \($0)" } ?? "")\(cause)"
        }
    }
}

extension GatehouseClientError {
    /// `error` as the SDK reports it: a `GatehouseClientError` unchanged, a cancellation (`CancellationError`,
    /// `URLError.cancelled`) as `cancelled`, anything else as `fallback` with `error` as its cause.
    static func wrapping(_ error: any Error, or fallback: (any Error) -> Self) -> Self {
        if let error = error as? Self { return error }
        if error is CancellationError || Self.isURLCancellation(error) { return .cancelled(underlying: error) }
        return fallback(error)
    }

    /// Whether `error` is Foundation's `URLError.cancelled`.
    static func isURLCancellation(_ error: any Error) -> Bool {
        (error as? URLError)?.code == .cancelled
    }
}

extension GatehouseClientError: LocalizedError {
    /// ``description``, so that `localizedDescription` (an alert's message) says what happened.
    public var errorDescription: String? { description }
}

extension ErrorCode where Domain == GatehouseClientError {
    /// The caller's task was cancelled (or `URLSession` reported `URLError.cancelled`).
    public static var cancelled: Self { Self(rawValue: "cancelled") }
    /// The app cancelled a challenge, or a request that was waiting for that handler when it was cancelled.
    public static var challengeCancelled: Self { Self(rawValue: "challengeCancelled") }
    /// A challenge was neither answered nor cancelled within ``ClientConfiguration/challengeTimeout``.
    public static var challengeTimedOut: Self { Self(rawValue: "challengeTimedOut") }
    /// The server challenged for a security check no handler is registered for.
    public static var missingChallengeHandler: Self { Self(rawValue: "missingChallengeHandler") }
    /// A security check failed (HTTP 403 from pre-authorization).
    public static var securityCheckFailed: Self { Self(rawValue: "securityCheckFailed") }
    /// The authorization sequence could not produce a usable token.
    public static var authorizationFailed: Self { Self(rawValue: "authorizationFailed") }
    /// The server refused to register the client.
    public static var registrationFailed: Self { Self(rawValue: "registrationFailed") }
    /// The server answered in a way the SDK does not expect.
    public static var serverError: Self { Self(rawValue: "serverError") }
    /// The server kept answering `409 MFP-Conflict`.
    public static var conflict: Self { Self(rawValue: "conflict") }
    /// A request did not complete in time.
    public static var timedOut: Self { Self(rawValue: "timedOut") }
    /// ``GatehouseClientError/flowWaitTimedOut(after:)``.
    public static var flowWaitTimedOut: Self { Self(rawValue: "flowWaitTimedOut") }
    /// The server could not be reached, or the connection failed.
    public static var transport: Self { Self(rawValue: "transport") }
    /// The key store could not be read or written.
    public static var keyStore: Self { Self(rawValue: "keyStore") }
    /// A handler is already registered for this security check.
    public static var duplicateChallengeHandler: Self { Self(rawValue: "duplicateChallengeHandler") }
    /// An argument is not usable.
    public static var invalidArgument: Self { Self(rawValue: "invalidArgument") }
    /// ``GatehouseClientError/applicationDisabled(message:downloadLink:)``.
    public static var applicationDisabled: Self { Self(rawValue: "applicationDisabled") }
    /// ``GatehouseClientError/deviceBlocked(message:failure:)``.
    public static var deviceBlocked: Self { Self(rawValue: "deviceBlocked") }
}
