public import Foundation
import GatehouseProtocol

/// A client of a Gatehouse (or IBM MobileFirst 8.0) authorization server: one application on one device.
///
/// Create one per application, register a challenge handler per security check once, then obtain tokens or
/// send ``ResourceRequest``s; registration, challenges, codes and tokens happen behind the scenes.
///
/// ```swift
/// let client = GatehouseClient(configuration: ClientConfiguration(
///     serverURL: URL(string: "http://127.0.0.1:8080")!, applicationID: "com.sample.pincodeswift"))
/// // PinCodeChallengeHandler: the app's SecurityCheckChallengeHandler subclass (see SecurityCheckChallengeHandler).
/// try client.registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
/// let token = try await client.obtainAccessToken(forScope: "accessRestricted")
/// ```
public final class GatehouseClient: Sendable {
    /// The SDK's version.
    public static let sdkVersion = "1.0.0"
    /// The MobileFirst platform version the SDK announces (`x-wl-platform-version`).
    public static let platformVersion = "8.0.0.00"

    /// The server and application.
    public let configuration: ClientConfiguration
    /// Tokens, login and logout.
    public let authorizationManager: AuthorizationManager
    /// Where the registration is kept.
    public let keyStore: any KeyStore

    let transport: any HTTPTransport
    let registry = ChallengeHandlerRegistry()
    let scopeCache = ResourceScopeCache()
    let registrar: Registrar
    let clock = ServerClock()
    let observer: ClientObserver

    /// A client.
    ///
    /// - Parameters:
    ///   - configuration: the server and the application.
    ///   - keyStore: where the key pair and client id are kept: ``KeyStores/standard(for:)`` by default (the Keychain on
    ///     Apple platforms, an owner-only file elsewhere), so that the registration outlives the process.
    ///     ``InMemoryKeyStore`` is for tests.
    ///   - transport: the HTTP stack; `URLSession` by default.
    public init(configuration: ClientConfiguration, keyStore: (any KeyStore)? = nil, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        let keyStore = keyStore ?? KeyStores.standard(for: configuration)
        self.keyStore = keyStore
        self.transport = transport
        observer = ClientObserver(logger: configuration.logger)
        let api = RuntimeAPI(configuration: configuration, transport: transport, clock: clock, observer: observer)
        registrar = Registrar(api: api, keyStore: keyStore)
        authorizationManager = AuthorizationManager(api: api, registrar: registrar, registry: registry)
    }

    /// Ends the streams of ``events(bufferSize:)``.
    deinit {
        observer.finish()
    }

    /// A client of `serverURL` for the application `applicationID`.
    public convenience init(serverURL: URL, applicationID: String, platform: String = "ios", version: String = "1.0",
                            keyStore: (any KeyStore)? = nil)
    {
        self.init(configuration: ClientConfiguration(serverURL: serverURL, applicationID: applicationID, platform: platform, version: version),
                  keyStore: keyStore)
    }

    // MARK: Challenge handlers

    /// Registers the handler of a security check's challenges. Register each handler once (at start-up).
    ///
    /// - Throws: ``GatehouseClientError/duplicateChallengeHandler(securityCheck:)`` when the check already has one.
    public func registerChallengeHandler(_ handler: some SecurityCheckChallengeResponder) throws(GatehouseClientError) {
        try registry.register(handler)
        (handler as? SecurityCheckChallengeHandler)?.attach(observer)
    }

    /// Registers a closure as the handler of `securityCheck`'s challenges.
    public func registerChallengeHandler(
        securityCheck: String, onSuccess: @escaping @Sendable (JSONObject) async -> Void = { _ in },
        onFailure: @escaping @Sendable (JSONObject) async -> Void = { _ in },
        onAbandoned: @escaping @Sendable (GatehouseClientError) async -> Void = { _ in },
        respond: @escaping @Sendable (JSONObject) async -> ChallengeAnswer
    ) throws(GatehouseClientError) {
        try registry.register(ClosureChallengeResponder(
            securityCheck: securityCheck, onSuccess: onSuccess, onFailure: onFailure, onAbandoned: onAbandoned, respond: respond))
    }

    /// Removes the handler of `securityCheck`.
    public func unregisterChallengeHandler(securityCheck: String) {
        registry.unregister(securityCheck: securityCheck)
    }

    /// Registers the handler of a gateway's login pages.
    public func registerLoginPageChallengeHandler(_ handler: LoginPageChallengeHandler) {
        handler.attach(transport: transport, configuration: configuration)
        registry.register(handler)
    }

    /// Registers the handler of a gateway's login pages (MobileFirst's name for
    /// ``registerLoginPageChallengeHandler(_:)``).
    public func registerGatewayChallengeHandler(_ handler: LoginPageChallengeHandler) {
        registerLoginPageChallengeHandler(handler)
    }

    // MARK: Observing

    /// The client's events from now on (registration, challenges, checks' outcomes, tokens), for as long as the
    /// caller iterates; each call makes a new stream. A subscriber that falls behind loses its oldest events
    /// beyond `bufferSize`.
    ///
    /// ```swift
    /// for await event in client.events() where event.kind == .challengeAbandoned {
    ///     dismissPrompt(for: event.securityCheck)
    /// }
    /// ```
    public func events(bufferSize: Int = 64) -> AsyncStream<GatehouseEvent> {
        observer.stream(bufferSize: bufferSize)
    }

    // MARK: Authorization

    /// An access token for `scope`: see ``AuthorizationManager/obtainAccessToken(forScope:)``.
    public func obtainAccessToken(forScope scope: String? = nil) async throws(GatehouseClientError) -> AccessToken {
        try await authorizationManager.obtainAccessToken(forScope: scope)
    }

    /// Logs in to a security check: see ``AuthorizationManager/login(securityCheck:credentials:)``.
    @discardableResult
    public func login(securityCheck: String, credentials: JSONObject) async throws(GatehouseClientError) -> JSONObject {
        try await authorizationManager.login(securityCheck: securityCheck, credentials: credentials)
    }

    /// Logs out of a security check: see ``AuthorizationManager/logout(securityCheck:)``.
    public func logout(securityCheck: String) async throws(GatehouseClientError) {
        try await authorizationManager.logout(securityCheck: securityCheck)
    }

    /// Forgets a cached token.
    public func clearAccessToken(_ token: AccessToken) async {
        await authorizationManager.clearAccessToken(token)
    }

    // MARK: Registration

    /// Registers the client now (otherwise it registers on first use), or updates its registration when the
    /// application data changed; returns the client id.
    @discardableResult
    public func register() async throws(GatehouseClientError) -> String {
        try await registrar.identity().clientID
    }

    /// Sets the device's display name (MobileFirst's `WLClient.setDeviceDisplayName`), by which operators find the
    /// device; `nil` clears it. Kept in the key store; the server's registration is updated at once when the client
    /// is registered (else at its registration).
    public func setDeviceDisplayName(_ name: String?) async throws(GatehouseClientError) {
        if let name, name.isEmpty || name.count > 256 { throw .invalidArgument("a device display name has 1 to 256 characters") }
        try await registrar.setDeviceDisplayName(name)
    }

    /// The device's display name set by ``setDeviceDisplayName(_:)``, if any.
    public var deviceDisplayName: String? {
        get async throws(GatehouseClientError) { try await registrar.deviceDisplayName() }
    }

    /// The client id, if the client is registered.
    public var clientID: String? {
        get async throws(GatehouseClientError) { try await registrar.existingIdentity()?.clientID }
    }

    /// The difference between the server's clock and this device's, ms, as learnt from the last pre-authorization.
    public var serverTimeOffsetMillis: Int64 { clock.offsetMillis }

    // MARK: Resources

    /// A request to `path` under the runtime API (`adapters/ResourceAdapter/balance`).
    public func resourceRequest(path: String, method: ResourceRequest.Method = .get, scope: String? = nil) -> ResourceRequest {
        ResourceRequest(client: self, path: path, method: method, scope: scope)
    }
}
