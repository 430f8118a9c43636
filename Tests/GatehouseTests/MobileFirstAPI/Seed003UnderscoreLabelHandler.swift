// Seed 003's handler in the other label style MobileFirst's tutorials use — the one their sample apps (PinCodeSwift)
// override, `handleChallenge(_:)` and `handleFailure(_:)` — otherwise as the seed writes it (import changed,
// `[NSObject : AnyObject]!` written `[AnyHashable : Any]!`). Nested in `Seed003Underscore`: the other seeds' classes
// have the same name in this test module.
import GatehouseMobileFirst

enum Seed003Underscore {}

extension Seed003Underscore {
class PinCodeChallengeHandler : SecurityCheckChallengeHandler {

    override func handleChallenge(_ challenge: [AnyHashable : Any]!) {
        NSLog("%@",challenge)
        var errorMsg : String
        if challenge["errorMsg"] is NSNull {
            errorMsg = "This data requires a PIN code."
        }
        else{
            errorMsg = challenge["errorMsg"] as! String
        }
        let remainingAttempts = challenge["remainingAttempts"] as! Int

        showPopup(errorMsg,remainingAttempts: remainingAttempts)
    }

    override func handleFailure(_ failure: [AnyHashable : Any]!) {
        if let errorMsg = failure["failure"] as? String {
            showError(errorMsg)
        }
        else{
            showError("Unknown error")
        }
    }
}
}

extension Seed003Underscore.PinCodeChallengeHandler {
    func showPopup(_ errorMsg: String, remainingAttempts: Int) {
        let screen = SampleScreen.shared
        if !SampleScreen.onMainQueue { screen.offMainThread += 1 }
        screen.popups.append((errorMsg, remainingAttempts))
        if screen.pins.isEmpty {
            self.cancel()
        } else {
            self.submitChallengeAnswer(["pin": screen.pins.removeFirst()])
        }
    }

    func showError(_ errorMsg: String) {
        if !SampleScreen.onMainQueue { SampleScreen.shared.offMainThread += 1 }
        SampleScreen.shared.errors.append(errorMsg)
    }
}
