// Seed 002 ("Implementing Security Check with Attempts in iOS applications"): the tutorial's handler on
// `WLChallengeHandler`, as it is written there. Changed, as issue 36 allows: the import line, and
// `[NSObject : AnyObject]!` written `[AnyHashable : Any]!`. Nested in `Seed002` (an extension around the verbatim
// class): seed 003's handler has the same name in this test module.
import GatehouseMobileFirst

enum Seed002 {}

extension Seed002 {
class PinCodeChallengeHandler : WLChallengeHandler {

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
}
