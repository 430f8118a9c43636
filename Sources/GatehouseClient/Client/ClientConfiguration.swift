public import Foundation
import GatehouseProtocol
public import Logging

/// What a ``GatehouseClient`` needs to know: where the server is and which application it is.
public struct ClientConfiguration: Sendable {
    /// The server's base URL, such as `http://127.0.0.1:8080`; the runtime API lives under ``runtimePath``.
    public var serverURL: URL
    /// The runtime's path under the server URL (`mfp` as in MobileFirst: the API is at `<server>/mfp/api`).
    public var runtimePath: String
    /// The application id the server's policy knows, such as `com.sample.pincodeswift`.
    public var applicationID: String
    /// The client platform (`ios`, `android`, ...).
    public var platform: String
    /// The application's version.
    public var version: String
    /// The device, as registered. `nil`: a generated device id, kept in the key store, and this machine's
    /// hardware and OS names.
    public var device: DeviceData?
    /// How long a challenge may stay unanswered before the requests waiting for it fail with
    /// ``GatehouseClientError/challengeTimedOut(securityCheck:)``.
    public var challengeTimeout: Duration
    /// The timeout of each request to the authorization server.
    public var requestTimeout: Duration
    /// Extra header fields sent with every request to the authorization server and with resource requests.
    public var globalHeaders: [String: String]
    /// How long before its expiry a cached token is replaced by a new one (as AppAuth does), so that a request
    /// never leaves with a token that expires on the way; at most half the token's lifetime. 60 s by default.
    public var refreshMargin: Duration
    /// Where the SDK logs (swift-log): registrations, challenges and tokens at `debug`, failures, abandoned
    /// challenges and late answers at `warning`. Never credentials, challenge data or tokens.
    public var logger: Logger
    /// Whether access tokens outlive the process: kept in the key store with the registration (the Keychain on Apple
    /// platforms, an owner-only file elsewhere) and used by the next client on that store until they need
    /// refreshing. Off by default: a token is then lost with the process, as MobileFirst's Android SDK loses it.
    public var persistsTokens = false
    /// How long a flow waits for the flows before it (a client runs one authorization flow at a time: a token, a
    /// login, a logout) before it fails with ``GatehouseClientError/flowWaitTimedOut(after:)`` instead of waiting on:
    /// a flow stuck behind a challenge nobody answers, or a hook that waits for the flow it was called from. Five
    /// minutes by default, several challenge timeouts.
    public var flowWaitTimeout: Duration = .seconds(300)

    /// - Parameters:
    ///   - serverURL: the server's base URL (`http://127.0.0.1:8080`).
    ///   - applicationID: the application id.
    ///   - platform: the client platform, `ios` by default.
    ///   - version: the application's version, `1.0` by default.
    ///   - device: the device data to register; `nil` for a generated device id.
    ///   - runtimePath: the runtime's context root on the server, `mfp` by default.
    ///   - challengeTimeout: how long a challenge may stay unanswered, 60 s by default.
    ///   - requestTimeout: the timeout of each request to the authorization server, 30 s by default.
    ///   - globalHeaders: header fields sent with every request.
    ///   - refreshMargin: how long before its expiry a token is replaced, 60 s by default.
    ///   - logger: where the SDK logs; `gatehouse.client` by default.
    public init(
        serverURL: URL, applicationID: String, platform: String = "ios", version: String = "1.0", device: DeviceData? = nil,
        runtimePath: String = "mfp", challengeTimeout: Duration = .seconds(60), requestTimeout: Duration = .seconds(30),
        globalHeaders: [String: String] = [:], refreshMargin: Duration = .seconds(60),
        logger: Logger = Logger(label: "gatehouse.client")
    ) {
        self.serverURL = serverURL
        self.runtimePath = runtimePath
        self.applicationID = applicationID
        self.platform = platform
        self.version = version
        self.device = device
        self.challengeTimeout = challengeTimeout
        self.requestTimeout = requestTimeout
        self.globalHeaders = globalHeaders
        self.refreshMargin = refreshMargin
        self.logger = logger
    }

    /// `<server>/<runtime>/api`, without a trailing slash.
    public var apiRoot: URL {
        var base = serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: "\(base)/\(runtimePath)/api")!
    }

    /// An URL under the runtime API, such as `az/v1/token`.
    public func apiURL(_ path: String) -> URL {
        URL(string: apiRoot.absoluteString + "/" + path.drop(while: { $0 == "/" }))!
    }

    /// The application as registered.
    public var application: ApplicationData {
        ApplicationData(id: applicationID, clientPlatform: platform, version: version)
    }

    /// The issuer of client assertions: `<appId>$<platform>$<version>`.
    var assertionIssuer: String { "\(applicationID)$\(platform)$\(version)" }
}
