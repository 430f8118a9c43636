// Plays the PinCodeSwift app's user against a real `gatehouse serve` (scripts/sample-apps). The app's
// PinCodeChallengeHandler.swift is compiled as it is (only its import changed) into this module; its
// ViewController.swift cannot be compiled on Linux (`@IBOutlet` needs the Objective-C runtime; scripts/sample-apps
// type-checks it and shows that is its only error), so `getBalance` below is its `getBalance(_:)`'s code, word for word,
// with the label the storyboard would connect.
import Foundation
import GatehouseMobileFirst
import UIKit

@MainActor final class BalanceScreen {
    let balanceLabel: UILabel! = UILabel()

    // ViewController.getBalance(_:), as the app has it.
    func getBalance() {
        let request = WLResourceRequest(url: URL(string: "/adapters/ResourceAdapter/balance"), method: WLHttpMethodGet)
        request?.send { (response, error) -> Void in
            if(error == nil){
                NSLog((response?.responseText)!)
                self.balanceLabel.text = "Balance = " + (response?.responseText)!

            }
            else{
                NSLog(error.debugDescription)
                self.balanceLabel.text = "Failed to get balance"
            }
        }
    }
}

@main
struct PinCodeDriver {
    @MainActor static func main() async {
        Harness.launch(application: "com.sample.PinCodeSwift")
        // AppDelegate.application(_:didFinishLaunchingWithOptions:)
        PinCodeChallengeHandler.registerSelf()
        let screen = BalanceScreen()

        // The user taps "Get balance", is asked for the PIN, and cancels.
        screen.getBalance()
        var alert = await Harness.wait(for: "PIN alert") { Harness.presentedAlert }
        Harness.check(alert.title == "Protected" && alert.message == "This data requires a PIN code.\nRemaining attempts: 3",
                      "the PIN alert asks: \(alert.message ?? "-")")
        Harness.check(alert.textFields?.first?.placeholder == "PIN CODE" && alert.textFields?.first?.keyboardType == .numberPad,
                      "with the PIN field")
        alert.tap("Cancel")
        _ = await Harness.wait(for: "the label after Cancel") { screen.balanceLabel.text }
        Harness.check(screen.balanceLabel.text == "Failed to get balance", "Cancel: \(screen.balanceLabel.text ?? "-")")

        // Again: a wrong PIN, then the right one.
        screen.balanceLabel.text = nil
        screen.getBalance()
        alert = await Harness.wait(for: "PIN alert") { Harness.presentedAlert }
        alert.textFields![0].text = "0000"
        alert.tap("OK")
        alert = await Harness.wait(for: "the PIN alert after a wrong PIN") { Harness.presentedAlert }
        Harness.check(alert.message?.hasSuffix("\nRemaining attempts: 2") == true && alert.message?.hasPrefix("This data requires") == false,
                      "a wrong PIN: the check's message, 2 attempts left: \(alert.message ?? "-")")
        alert.textFields![0].text = "1234"
        alert.tap("OK")
        let text = await Harness.wait(for: "the balance") { screen.balanceLabel.text }
        Harness.check(text.hasPrefix("Balance = ") && text.contains("19938.80"), "the label shows the balance: \(text)")
        await Harness.settle()
        Harness.check(Harness.presentedAlert == nil, "no alert left")

        // The PIN's success holds: the next balance asks nothing.
        screen.balanceLabel.text = nil
        screen.getBalance()
        let again = await Harness.wait(for: "the balance again") { screen.balanceLabel.text }
        Harness.check(again == text && Harness.presentedAlert == nil, "the balance again, without a PIN")
        print("PinCodeSwift: passed")
        exit(0)
    }
}
