// The seeds' "sample application" part, which the tutorials leave out ("The implementation of showPopup is included in
// the sample application"): on iOS an alert with a PIN field, OK (`submitChallengeAnswer`) and Cancel (`cancel()` /
// `submitFailure(nil)`); here the user is scripted by `SampleScreen`.
import Foundation
import GatehouseMobileFirst

extension PinCodeChallengeHandler {
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

extension Seed002.PinCodeChallengeHandler {
    func showPopup(_ errorMsg: String, remainingAttempts: Int) {
        let screen = SampleScreen.shared
        if !SampleScreen.onMainQueue { screen.offMainThread += 1 }
        screen.popups.append((errorMsg, remainingAttempts))
        if screen.pins.isEmpty {
            self.submitFailure(nil)
        } else {
            self.submitChallengeAnswer(["pin": screen.pins.removeFirst()])
        }
    }

    func showError(_ errorMsg: String) {
        SampleScreen.shared.errors.append(errorMsg)
    }
}
