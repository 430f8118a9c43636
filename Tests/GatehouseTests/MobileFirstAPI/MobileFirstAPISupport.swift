import Foundation
import GatehouseClient
import GatehouseMobileFirst

/// The shared MobileFirst client of the API tests, pointed at a test server with a registration of its own.
enum MobileFirstApp {
    /// `WLClient.sharedInstance()` on `server` as application `id` (a new in-memory key store: a new registration).
    @MainActor static func configure(_ server: TestServer, application id: String = "com.sample.pincodeswift") {
        let client: WLClient = WLClient.sharedInstance()
        client.setServerUrl(URL(string: server.baseURL + "/mfp")!)
        client.setApplication(id: id, platform: "ios", version: "1.0")
        client.keyStore = InMemoryKeyStore()
    }
}

/// What the seeds' sample application showed, in order, and on which thread.
@MainActor final class SampleScreen {
    static let shared = SampleScreen()
    var popups: [(message: String, remainingAttempts: Int)] = []
    var errors: [String] = []
    var offMainThread = 0
    /// The PINs the user types, first to last; none left: the user presses Cancel.
    var pins: [String] = []

    /// Set on the main queue: seen by code the main queue runs (the main actor's, where MobileFirst's hooks run).
    static let mainQueue = DispatchSpecificKey<Bool>()

    /// Whether the caller runs on the main queue.
    static var onMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueue) == true }

    func reset(pins: [String]) {
        DispatchQueue.main.setSpecific(key: Self.mainQueue, value: true)
        popups = []
        errors = []
        offMainThread = 0
        self.pins = pins
    }
}
