import Foundation
public import GatehouseClient

/// MobileFirst's error codes by name (`WLErrorCode`), as `NSError` codes in the domain ``WLError/domain``: match on
/// the names; the numbers are Gatehouse's.
public enum WLErrorCode: Int, Sendable {
    case unexpectedError = 0
    case requestTimeout = 3
    case unresponsiveHost = 4
    case challengeHandlingCanceled = 13
    case authorizationFailure = 15
    case procedureError = 18
    case unsupportedBrowser = 24
    case applicationDisabled = 1001
    case deviceBlocked = 1002
}

/// An error of a MobileFirst call: its ``WLErrorCode`` and a message; an `NSError` of ``domain`` for Objective-C era
/// code (`(error as NSError).code`).
public struct WLError: Error, CustomNSError, LocalizedError, Sendable {
    public static let domain = "com.worklight.wlclient"
    public static var errorDomain: String { domain }

    public let code: WLErrorCode
    public let message: String
    /// The Gatehouse SDK's error behind it, when there is one.
    public let underlying: GatehouseClientError?

    init(_ code: WLErrorCode, _ message: String, underlying: GatehouseClientError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var errorDescription: String? { message }

    /// The SDK's error as MobileFirst names it.
    init(_ error: GatehouseClientError) {
        let code: WLErrorCode = switch error.code {
        case .challengeCancelled, .cancelled: .challengeHandlingCanceled
        case .timedOut, .challengeTimedOut, .flowWaitTimedOut: .requestTimeout
        case .transport: .unresponsiveHost
        case .securityCheckFailed: .authorizationFailure
        case .applicationDisabled: .applicationDisabled
        case .deviceBlocked: .deviceBlocked
        default: .unexpectedError
        }
        self.init(code, error.description, underlying: error)
    }
}
