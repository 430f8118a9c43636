import Foundation
public import GatehouseClient
import GatehouseProtocol

/// MobileFirst's `WLClient` over the Gatehouse SDK: the shared client of the app — where the server is, the
/// registered challenge handlers, the headers sent with every request.
///
/// As with MobileFirst, every method can be called from any thread or isolation; completion handlers run on the main
/// thread. MobileFirst's iOS SDK reads the server from `mfpclient.plist` and the application from the app's bundle;
/// so does this one (`protocol`, `host`, `port`, `wlServerContext`; `CFBundleIdentifier`,
/// `CFBundleShortVersionString`), and ``setServerUrl(_:)`` and ``setApplication(id:platform:version:)`` set them
/// otherwise (Linux, tests).
public final class WLClient: NSObject, Sendable {
    /// The shared client, not optional (for this module's own calls).
    static let shared = WLClient()

    /// The shared client (`WLClient!`, as Swift sees MobileFirst's `+sharedInstance`: `sharedInstance()?.…` compiles).
    public static func sharedInstance() -> WLClient! { shared }

    struct State {
        var server: URL?
        var application: (id: String, platform: String, version: String)?
        var handlers: [String: BaseChallengeHandler] = [:]
        var current: GatehouseClient?
        var keyStore: (any KeyStore)?
        var globalHeaders: [(name: String, value: String)] = []
        var heartBeatInterval: Int = 420
        /// The public key pinned by ``pinTrustedCertificatePublicKey(fromFile:)``, or why it could not be.
        var pin: Result<PublicKeyPin, WLError>?
    }

    let state = Locked(State())

    override init() {}   // the app uses sharedInstance(); tests make their own

    /// Where the registration's key is kept (the platform's standard store unless set); set it before the first
    /// request (a new store is a new registration).
    public var keyStore: (any KeyStore)? {
        get { state.withLock { $0.keyStore } }
        set { state.withLock { $0.keyStore = newValue; $0.current = nil } }
    }

    /// The server's URL with its runtime context root (`https://mfp.example.com:443/mfp`).
    public func setServerUrl(_ url: URL!) {
        state.withLock { $0.server = url; $0.current = nil }
    }

    /// The server's URL with its runtime context root, from ``setServerUrl(_:)`` or `mfpclient.plist`.
    public func serverUrl() -> URL! {
        state.withLock { $0.server } ?? Self.plistServer()
    }

    /// The application as the server knows it (Gatehouse: what the bundle says on Apple platforms).
    public func setApplication(id: String, platform: String, version: String) {
        state.withLock { $0.application = (id, platform, version); $0.current = nil }
    }

    /// Registers `challengeHandler` for its security check (once in the app's life, as MobileFirst advises); a later
    /// handler for the same check replaces it.
    public func registerChallengeHandler(_ challengeHandler: BaseChallengeHandler!) {
        guard let challengeHandler else { return }
        let current = state.withLock { state in
            state.handlers[challengeHandler.securityCheck] = challengeHandler
            return state.current
        }
        if let current { try? current.registerChallengeHandler(challengeHandler.bridge) }
    }

    /// The handler registered for `securityCheck`.
    public func getChallengeHandler(forSecurityCheck securityCheck: String!) -> BaseChallengeHandler? {
        state.withLock { $0.handlers[securityCheck ?? ""] }
    }

    /// The Gatehouse client behind the shared one, made at first use.
    func client() throws(WLError) -> GatehouseClient {
        let (existing, server, application, keyStore, handlers) = state.withLock {
            ($0.current, $0.server, $0.application, $0.keyStore, Array($0.handlers.values))
        }
        if let existing { return existing }
        guard let server = server ?? Self.plistServer() else {
            throw WLError(.unexpectedError, "No server: set it in mfpclient.plist or with WLClient.sharedInstance().setServerUrl(_:)")
        }
        guard let application = application ?? Self.bundleApplication() else {
            throw WLError(.unexpectedError, "No application: call WLClient.sharedInstance().setApplication(id:platform:version:)")
        }
        // https://host:port/mfp: the runtime path is the context root's last component.
        var base = URLComponents(url: server, resolvingAgainstBaseURL: false)
        let context = server.path.split(separator: "/").last.map(String.init) ?? "mfp"
        base?.path = "/" + server.path.split(separator: "/").dropLast().joined(separator: "/")
        if base?.path == "/" { base?.path = "" }
        guard let root = base?.url else { throw WLError(.unexpectedError, "The server URL \(server) cannot be used") }
        let configuration = ClientConfiguration(serverURL: root, applicationID: application.id, platform: application.platform,
                                                version: application.version, runtimePath: context)
        let made: GatehouseClient
        switch state.withLock({ $0.pin }) {
        case nil:
            made = GatehouseClient(configuration: configuration, keyStore: keyStore)
        case .failure(let error):
            throw error   // fail closed: no request leaves without the pin the app asked for
        case .success(let pin):
            do {
                made = GatehouseClient(configuration: configuration, keyStore: keyStore,
                                       transport: try URLSessionTransport(pins: [pin.description]))
            } catch {
                throw WLError(error)
            }
        }
        for handler in handlers { try? made.registerChallengeHandler(handler.bridge) }
        // Two first calls at once: the first one made wins, so that there is one registration.
        return state.withLock { state in
            if let current = state.current { return current }
            state.current = made
            return made
        }
    }

    /// Runs `work` on the shared Gatehouse client and hands `completion`, on the main thread, what it returns — a
    /// value and an error, as MobileFirst's completion handlers take them — or its error (the SDK's as a
    /// ``WLError``).
    func complete<T: Sendable>(_ completion: (@MainActor @Sendable (T?, (any Error)?) -> Void)?,
                               _ work: @escaping @Sendable (GatehouseClient) async throws -> (T?, WLError?)) {
        let client: GatehouseClient
        do {
            client = try self.client()
        } catch {
            MainThread.async { completion?(nil, error) }
            return
        }
        Task {
            let value: T?
            let failure: (any Error)?
            do {
                (value, failure) = try await work(client)
            } catch let error as GatehouseClientError {
                (value, failure) = (nil, WLError(error))
            } catch {
                (value, failure) = (nil, error)
            }
            MainThread.async { completion?(value, failure) }
        }
    }

    /// The server `mfpclient.plist` in `bundle` names (`protocol`, `host`, `port`, `wlServerContext`), or `nil` when
    /// there is none or it names no host (MobileFirst's samples ship it with the host left empty).
    static func plistServer(in bundle: Bundle = .main) -> URL? {
        guard let path = bundle.path(forResource: "mfpclient", ofType: "plist"),
              let data = FileManager.default.contents(atPath: path),
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
              let scheme = plist["protocol"] as? String, let host = plist["host"] as? String, !host.isEmpty else { return nil }
        let port = (plist["port"] as? String).map { ":\($0)" } ?? ""
        let context = (plist["wlServerContext"] as? String ?? "/mfp/").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        return URL(string: "\(scheme)://\(host)\(port)/\(context)")
    }

    static func bundleApplication() -> (id: String, platform: String, version: String)? {
        guard let id = Bundle.main.bundleIdentifier else { return nil }
        let version = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String ?? "1.0"
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return (id, "ios", version)
        #else
        return nil
        #endif
    }
}
