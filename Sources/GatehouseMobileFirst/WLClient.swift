import Foundation
public import GatehouseClient
import GatehouseProtocol
import Logging

/// MobileFirst's `WLClient` over the Gatehouse SDK: the shared client of the app — where the server is, and the
/// registered challenge handlers.
///
/// MobileFirst's iOS SDK reads the server from `mfpclient.plist` and the application from the app's bundle; so does
/// this one (`protocol`, `host`, `port`, `wlServerContext`; `CFBundleIdentifier`, `CFBundleShortVersionString`), and
/// ``setServerUrl(_:)`` and ``setApplication(id:platform:version:)`` set them otherwise (Linux, tests).
@MainActor
public final class WLClient {
    private static let shared = WLClient()

    /// The shared client.
    public static func sharedInstance() -> WLClient { shared }

    private var server: URL?
    private var application: (id: String, platform: String, version: String)?
    private var handlers: [String: BaseChallengeHandler] = [:]
    private var current: GatehouseClient?
    /// Where the registration's key is kept (the platform's standard store unless set); set it before the first
    /// request (a new store is a new registration).
    public var keyStore: (any KeyStore)? {
        didSet { current = nil }
    }

    private init() {}

    /// The server's URL with its runtime context root (`https://mfp.example.com:443/mfp`).
    public func setServerUrl(_ url: URL!) {
        server = url
        current = nil
    }

    /// The server's URL with its runtime context root, from ``setServerUrl(_:)`` or `mfpclient.plist`.
    public func serverUrl() -> URL! {
        server ?? Self.plistServer()
    }

    /// The application as the server knows it (Gatehouse: what the bundle says on Apple platforms).
    public func setApplication(id: String, platform: String, version: String) {
        application = (id, platform, version)
        current = nil
    }

    /// Registers `challengeHandler` for its security check (once in the app's life, as MobileFirst advises).
    public func registerChallengeHandler(_ challengeHandler: BaseChallengeHandler!) {
        handlers[challengeHandler.securityCheck] = challengeHandler
        if let current { try? current.registerChallengeHandler(challengeHandler.bridge) }
    }

    /// The handler registered for `securityCheck`.
    public func getChallengeHandler(forSecurityCheck securityCheck: String!) -> BaseChallengeHandler? {
        handlers[securityCheck]
    }

    /// The Gatehouse client behind the shared one, made at first use.
    func client() throws(WLError) -> GatehouseClient {
        if let current { return current }
        guard let server = serverUrl() else {
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
        let client = GatehouseClient(configuration: configuration, keyStore: keyStore)
        for handler in handlers.values { try? client.registerChallengeHandler(handler.bridge) }
        current = client
        return client
    }

    /// Runs `work` on the shared Gatehouse client and hands `completion`, on the main actor, what it returns — a value
    /// and an error, as MobileFirst's completion handlers take them — or its error (the SDK's as a ``WLError``).
    func complete<T: Sendable>(_ completion: ((T?, (any Error)?) -> Void)?,
                               _ work: @escaping @Sendable (GatehouseClient) async throws -> (T?, WLError?)) {
        let client: GatehouseClient
        do {
            client = try self.client()
        } catch {
            completion?(nil, error)
            return
        }
        nonisolated(unsafe) let completion = completion
        Task { @MainActor in
            do {
                let (value, error) = try await work(client)
                completion?(value, error)
            } catch let error as GatehouseClientError {
                completion?(nil, WLError(error))
            } catch {
                completion?(nil, error)
            }
        }
    }

    static func plistServer() -> URL? {
        guard let path = Bundle.main.path(forResource: "mfpclient", ofType: "plist"),
              let data = FileManager.default.contents(atPath: path),
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
              let scheme = plist["protocol"] as? String, let host = plist["host"] as? String else { return nil }
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
