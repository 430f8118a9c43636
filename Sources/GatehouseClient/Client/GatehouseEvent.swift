public import Foundation
import GatehouseProtocol

/// Something that happened in a ``GatehouseClient``: a registration, a challenge and its fate, a security check's
/// outcome, a token. Read them from ``GatehouseClient/events(bufferSize:)``, for logs, analytics or a debug screen.
///
/// A struct with a stable, extensible ``Kind`` (not an enum), so that new kinds can be added without breaking a
/// `switch` in an app.
public struct GatehouseEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public struct Kind: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The kind's name.
        public let rawValue: String
        /// The kind named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The name.
        public var description: String { rawValue }

        /// The client registered (``GatehouseEvent/clientID``).
        public static let registered = Kind(rawValue: "registered")
        /// A security check's challenge was put to its handler (``GatehouseEvent/payload`` is the challenge).
        public static let challengeReceived = Kind(rawValue: "challengeReceived")
        /// The handler answered the challenge.
        public static let challengeAnswered = Kind(rawValue: "challengeAnswered")
        /// The app cancelled the challenge (its handler called `cancel()`).
        public static let challengeCancelled = Kind(rawValue: "challengeCancelled")
        /// The challenge was abandoned without the app (timeout, every caller cancelled); ``GatehouseEvent/error`` says why.
        public static let challengeAbandoned = Kind(rawValue: "challengeAbandoned")
        /// An answer came when no challenge was open (too late): it was not sent.
        public static let lateAnswer = Kind(rawValue: "lateAnswer")
        /// A security check succeeded (``GatehouseEvent/payload`` is its success data).
        public static let securityCheckSucceeded = Kind(rawValue: "securityCheckSucceeded")
        /// A security check failed (``GatehouseEvent/payload`` is its failure data).
        public static let securityCheckFailed = Kind(rawValue: "securityCheckFailed")
        /// The application's operator has a notice for its users (MobileFirst's administrator message: ``GatehouseEvent/payload``
        /// is `{"message","messageId"}`). The SDK acknowledges it for the app unless a handler is registered for
        /// `wl_remoteDisableRealm`; show the message — the server sends each message once per registration.
        public static let administratorMessage = Kind(rawValue: "administratorMessage")
        /// A token was obtained (``GatehouseEvent/scope``, ``GatehouseEvent/expiresAt``).
        public static let tokenObtained = Kind(rawValue: "tokenObtained")
        /// An authorization flow failed (``GatehouseEvent/scope``, ``GatehouseEvent/error``).
        public static let tokenFailed = Kind(rawValue: "tokenFailed")
    }

    /// What happened.
    public let kind: Kind
    /// The security check (or gateway handler) concerned.
    public var securityCheck: String?
    /// The scope of a token event.
    public var scope: String?
    /// The challenge, success or failure data.
    public var payload: JSONObject?
    /// The error of a failure or an abandoned challenge.
    public var error: GatehouseClientError?
    /// The client id of a registration.
    public var clientID: String?
    /// When an obtained token expires.
    public var expiresAt: Date?
    /// When it happened.
    public let date: Date

    /// An event of `kind`, now; set the other properties as needed.
    public init(_ kind: Kind, securityCheck: String? = nil, scope: String? = nil, payload: JSONObject? = nil,
                error: GatehouseClientError? = nil, clientID: String? = nil, expiresAt: Date? = nil)
    {
        self.kind = kind
        self.securityCheck = securityCheck
        self.scope = scope
        self.payload = payload
        self.error = error
        self.clientID = clientID
        self.expiresAt = expiresAt
        date = Date()
    }

    /// `kind` and what it concerns (never the payload: it may hold credentials or personal data).
    public var description: String {
        var parts = [kind.rawValue]
        if let securityCheck { parts.append("check=\(securityCheck)") }
        if let scope { parts.append("scope=\"\(scope)\"") }
        if let clientID { parts.append("client=\(clientID)") }
        if let error { parts.append("error=\(error.code)") }
        return parts.joined(separator: " ")
    }
}
