// The driver's side of a sample app run (copied into each app target by scripts/sample-apps): the app's launch
// environment (the server, the application, a window) and bounded waits for what the app shows.
import Foundation
import GatehouseClient
import GatehouseMobileFirst
import UIKit

@MainActor enum Harness {
    /// `<driver> <server URL> <key store directory>`: points the shared client at the server's runtime as
    /// `application` (the id of the app's descriptor), keeping the registration's key in the directory.
    static func launch(application: String) {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, let server = URL(string: arguments[1] + "/mfp") else {
            fail("usage: \(arguments[0]) <server URL> <key store directory>")
        }
        WLClient.sharedInstance().setServerUrl(server)
        WLClient.sharedInstance().setApplication(id: application, platform: "ios", version: "1.0")
        useKeyStore()
        let window = UIWindow()
        window.rootViewController = UIViewController()
        UIApplication.shared.keyWindow = window
    }

    /// Keeps the registration's key in the directory named on the command line (on iOS: the keychain). Set again,
    /// the shared client starts afresh on the same registration, as the app after a restart.
    static func useKeyStore() {
        WLClient.sharedInstance().keyStore = FileKeyStore(directory: URL(fileURLWithPath: CommandLine.arguments[2]))
    }

    /// What `probe` finds, polled every 20 ms for up to `seconds`; the run fails if it finds nothing.
    static func wait<T>(for what: String, seconds: Double = 30, _ probe: () -> T?) async -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let found = probe() { return found }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        fail("no \(what) within \(Int(seconds)) s")
    }

    /// Lets the main queue run what is queued (callbacks that must *not* come are given the time to).
    static func settle(seconds: Double = 0.5) async {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }

    /// The alert presented over the root view controller, if any.
    static var presentedAlert: UIAlertController? {
        UIApplication.shared.keyWindow?.rootViewController?.presentedViewController as? UIAlertController
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if condition { print("ok: \(message())") } else { fail(message()) }
    }

    static func fail(_ message: String) -> Never {
        print("FAIL: \(message)")
        exit(1)
    }
}
