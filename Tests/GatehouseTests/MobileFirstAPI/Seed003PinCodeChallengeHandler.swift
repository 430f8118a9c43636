// Seed 003 ("Implementing the challenge handler in iOS applications", MobileFirst 8.0): the tutorial's handler as it
// is written there. Changed, as issue 36 allows: the import line, and `[NSObject : AnyObject]!` written as
// MobileFirst's later iOS SDK imports it, `[AnyHashable : Any]!`. Nothing else.
import GatehouseMobileFirst

class PinCodeChallengeHandler : SecurityCheckChallengeHandler {

    override func handleChallenge(challenge: [AnyHashable : Any]!) {
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

    override func handleFailure(failure: [AnyHashable : Any]!) {
        if let errorMsg = failure["failure"] as? String {
            showError(errorMsg)
        }
        else{
            showError("Unknown error")
        }
    }
}
