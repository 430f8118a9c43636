// Plays the RememberMeSwift app's flow against a real `gatehouse serve` (scripts/sample-apps): login with and
// without remember-me, obtainAccessToken for UserLogin after the app restarts, the balance, logout. None of the
// app's own files compile on Linux (each uses `#selector` or `@IBOutlet`; scripts/sample-apps type-checks them and
// shows those are their only errors), so the calls below are the ones its RememberMeChallengeHandler and
// ProtectedViewController make, with the same arguments, from a handler written the way the app writes its own
// (`override init()`, `super.init(securityCheck:)`, registering itself).
import Foundation
import GatehouseMobileFirst
import UIKit

@MainActor final class UserLoginHandler: SecurityCheckChallengeHandler {
    var challenges: [[AnyHashable: Any]] = []
    var successes: [[AnyHashable: Any]] = []
    /// What the user types at the next challenges; none left: the user cancels.
    var answers: [[AnyHashable: Any]] = []

    override init() {
        super.init(securityCheck: "UserLogin")
        WLClient.sharedInstance().registerChallengeHandler(self)
    }

    override func handleChallenge(_ challenge: [AnyHashable: Any]!) {
        challenges.append(challenge)
        if answers.isEmpty { cancel() } else { submitChallengeAnswer(answers.removeFirst()) }
    }

    override func handleSuccess(_ success: [AnyHashable: Any]!) {
        successes.append(success)
    }
}

@MainActor enum RememberMe {
    static func login(rememberMe: Bool) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            WLAuthorizationManager.sharedInstance().login("UserLogin", withCredentials: ["username": "john", "password": "demo", "rememberMe": rememberMe]) { (error) -> Void in
                continuation.resume(returning: error)
            }
        }
    }

    static func obtainAccessToken() async -> (AccessToken?, (any Error)?) {
        await withCheckedContinuation { continuation in
            WLAuthorizationManager.sharedInstance().obtainAccessToken(forScope: "UserLogin") { (token, error) -> Void in
                continuation.resume(returning: (token, error))
            }
        }
    }

    static func logout() async -> (any Error)? {
        await withCheckedContinuation { continuation in
            WLAuthorizationManager.sharedInstance().logout("UserLogin") { (error) -> Void in
                continuation.resume(returning: error)
            }
        }
    }

    /// The app quits and is started again: a new client on the same registration (the key store on disk).
    static func relaunch() {
        Harness.useKeyStore()
    }
}

@main
struct RememberMeDriver {
    @MainActor static func main() async {
        Harness.launch(application: "com.sample.RememberMeSwift")
        // AppDelegate: `_ = RememberMeChallengeHandler()`
        let handler = UserLoginHandler()
        // The policy's UserLogin success lasts 2 s; remember-me 300 s.
        let successLasts = 2.5

        // Without remember-me: logged in, a token; after the success expired, the restarted app is asked again.
        Harness.check(await RememberMe.login(rememberMe: false) == nil, "login without remember-me")
        await Harness.settle()
        let user = handler.successes.last?["user"] as? [String: Any]
        Harness.check(user?["displayName"] as? String == "John Doe", "handleSuccess: user.displayName \(String(describing: user?["displayName"]))")
        var (token, error) = await RememberMe.obtainAccessToken()
        Harness.check(token != nil && error == nil && handler.challenges.isEmpty, "a UserLogin token, no challenge")
        await Harness.settle(seconds: successLasts)
        RememberMe.relaunch()
        handler.answers = [["username": "john", "password": "demo", "rememberMe": true]]
        (token, error) = await RememberMe.obtainAccessToken()
        Harness.check(handler.challenges.count == 1, "not remembered: the restarted app is challenged")
        Harness.check(handler.challenges.first?["remainingAttempts"] as? Int != nil, "the challenge: \(handler.challenges.first ?? [:])")
        Harness.check(token != nil && error == nil, "answered with remember-me: a token")

        // With remember-me: the restarted app gets its token without a challenge, and the balance.
        await Harness.settle(seconds: successLasts)
        RememberMe.relaunch()
        (token, error) = await RememberMe.obtainAccessToken()
        Harness.check(token != nil && error == nil && handler.challenges.count == 1, "remembered: a token after the restart, no challenge")
        let label = UILabel()
        // ProtectedViewController.getBalanceClicked(_:)
        let url = URL(string: "/adapters/ResourceAdapter/balance");
        let request = WLResourceRequest(url: url, method: WLHttpMethodGet);
        request?.send{ (response, error) -> Void in
            if(error != nil){
                NSLog("Failed to get balance. error: " + String(describing: error))
                label.text = "Failed to get balance...";
            }
            else if(response != nil){
                label.text = "Balance: " + (response?.responseText)!;
            }
        }
        let text = await Harness.wait(for: "the balance") { label.text }
        Harness.check(text.hasPrefix("Balance: ") && text.contains("19938.80"), "the balance: \(text)")

        // Logout: the next token needs the login again (the user cancels it).
        Harness.check(await RememberMe.logout() == nil, "logout")
        RememberMe.relaunch()
        (token, error) = await RememberMe.obtainAccessToken()
        Harness.check(handler.challenges.count == 2 && token == nil, "after logout: challenged again")
        Harness.check((error as? WLError)?.code == .challengeHandlingCanceled, "cancelled: \(String(describing: error))")
        print("RememberMeSwift: passed")
        exit(0)
    }
}
