import ArgumentParser
import Foundation
import GatehouseClient
import GatehouseProtocol

/// `gatehouse pincode`: MobileFirst's PinCodeSwift sample app in a terminal: the bank balance behind a PIN.
struct DemoPinCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pincode",
        abstract: "Demo: get the bank balance from ResourceAdapter, answering the PIN challenge at the terminal."
    )

    @OptionGroup var options: DemoOptions

    func run() async throws {
        let terminal = Terminal.shared
        let client = try options.client(defaultApp: "com.sample.pincodeswift")
        try client.registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts", terminal: terminal))
        terminal.say("PinCode demo: getting the balance from \(client.configuration.apiURL("adapters/ResourceAdapter/balance"))")
        do {
            let response = try await client.resourceRequest(path: "adapters/ResourceAdapter/balance").send()
            guard response.isSuccess else {
                terminal.say("The balance request answered HTTP \(response.status): \(response.text)")
                throw ExitCode(1)
            }
            terminal.say("Balance: \(response.text)")
        } catch let error as GatehouseClientError {
            if case .securityCheckFailed = error {
                // handleFailure has shown the failure ("Account blocked").
            } else {
                terminal.say("No balance: \(error)")
            }
            throw ExitCode(1)
        }
    }
}

/// The seed's challenge handler: shows the error message and the remaining attempts, asks for the PIN.
final class PinCodeChallengeHandler: TerminalChallengeHandler, @unchecked Sendable {
    override func handleChallenge(_ challenge: JSONObject) {
        terminal.say(challenge["errorMsg"]?.stringValue ?? "This data requires a PIN code.")
        let remaining = challenge["remainingAttempts"]?.intValue.map { $0 == 1 ? "1 attempt" : "\($0) attempts" } ?? "? attempts"
        ask("PIN (\(remaining) left):", answer: "pin", cancelled: "(no PIN: cancelled)")
    }

    override func handleFailure(_ failure: JSONObject) {
        terminal.say(failure["failure"]?.stringValue ?? "Unknown error")
    }
}
