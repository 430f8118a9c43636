/// `POST preauth/v1/preauthorize` body (JSON).
public struct PreauthorizeRequest: Codable, Sendable {
    public var client_id: String
    public var scope: String?
    /// Answers by security-check name; present only when answering or logging in pre-emptively.
    public var challengeResponse: [String: JSON]?

    public init(clientID: String, scope: String?, challengeResponse: [String: JSON]? = nil) {
        self.client_id = clientID
        self.scope = scope
        self.challengeResponse = challengeResponse
    }
}

extension PreauthorizeRequest: JSONValueDecodable {
    package init?(json: JSON) {
        guard case .object = json, let clientID = json.requiredString("client_id"), let scope = json.optionalString("scope"),
              let answers = json.optionalObject("challengeResponse")
        else { return nil }
        self.init(clientID: clientID, scope: scope, challengeResponse: answers)
    }
}

/// The outcome of one pre-authorization round (runtime REST API `preauth/v1/preauthorize`).
///
/// - 200: only `successes`.
/// - 401 with `WWW-Authenticate: MFP-Challenge`: `challenges` (and the `successes` so far).
/// - 403: `failures`.
public struct PreauthorizeResponse: Codable, Sendable, Equatable {
    public var successes: [String: JSON]?
    public var challenges: [String: JSON]?
    public var failures: [String: JSON]?

    public init(successes: [String: JSON]? = nil, challenges: [String: JSON]? = nil, failures: [String: JSON]? = nil) {
        self.successes = successes
        self.challenges = challenges
        self.failures = failures
    }
}

extension PreauthorizeResponse: JSONTextEncodable {
    package func write(to text: inout JSONText) {
        text.object { answer in
            answer.member("challenges", members: challenges)
            answer.member("failures", members: failures)
            answer.member("successes", members: successes)
        }
    }
}

/// Names the protocol reserves.
public enum ProtocolNames {
    /// The pseudo-check in every pre-authorization answer: `{"serverTimeStamp": <ms>}`.
    public static let clockSynchronization = "clockSynchronization"
    /// The `WWW-Authenticate` value of a pre-authorization challenge.
    public static let mfpChallenge = "MFP-Challenge"
    /// The header of a 409 answer to a write conflict on a client's state.
    public static let conflictHeader = "MFP-Conflict"
    /// The redirect URI of native clients.
    public static let nativeRedirectHost = "mfpredirecturi"
}

/// MobileFirst's remote disable and administrator messages on the wire, as the MobileFirst SDKs' built-in handler
/// reads them (remoteDisableChallengeHandler.js): the check's challenge `{"message","messageId","messageType":"NOTIFY"}`,
/// answered `{"messageId"}`; its failure `{"message","downloadLink"}` for a disabled application version.
public enum RemoteDisableWire {
    /// The check's name.
    public static let checkName = "wl_remoteDisableRealm"
    public static let message = "message"
    public static let messageID = "messageId"
    public static let messageType = "messageType"
    /// The `messageType` of a notice (shown once per message id).
    public static let notify = "NOTIFY"
    public static let downloadLink = "downloadLink"
}
