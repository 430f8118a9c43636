import ArgumentParser
import Foundation
import GatehouseClient
import GatehouseProtocol

/// `gatehouse captcha`: MobileFirst's SimpleCaptcha sample app in a terminal.
struct DemoCaptchaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "captcha",
        abstract: "Demo: obtain a token for the SimpleCaptcha scope, answering the captcha at the terminal."
    )

    @OptionGroup var options: DemoOptions

    func run() async throws {
        let terminal = Terminal.shared
        let client = try options.client(defaultApp: "com.sample.simplecaptcha")
        try client.registerChallengeHandler(CaptchaChallengeHandler(securityCheck: "SimpleCaptcha", terminal: terminal))
        terminal.say("SimpleCaptcha demo: obtaining an access token for scope SimpleCaptcha from \(options.server)")
        do {
            let token = try await client.obtainAccessToken(forScope: "SimpleCaptcha")
            terminal.say("Token obtained (\(token.summary)).")
            let again = try await client.obtainAccessToken(forScope: "SimpleCaptcha")
            terminal.say(again == token ? "Obtained again: from the cache, no challenge." : "Obtained again: a new token.")
        } catch {
            terminal.say("No token: \(error)")
            throw ExitCode(1)
        }
    }
}

/// The seed's challenge handler: shows `X + Y = ?`, reads the answer, submits it; a wrong answer brings a new
/// captcha.
final class CaptchaChallengeHandler: TerminalChallengeHandler, @unchecked Sendable {
    override func handleChallenge(_ challenge: JSONObject) {
        if let message = challenge["message"]?.stringValue { terminal.say(message) }
        ask("\(challenge["captcha"]?.stringValue ?? "?") = ?", answer: "answer", cancelled: "(no answer: cancelled)")
    }

    override func handleSuccess(_ success: JSONObject) {
        terminal.say("Captcha solved.")
    }

    override func handleFailure(_ failure: JSONObject) {
        terminal.say(failure["failure"]?.stringValue ?? "Captcha failed.")
    }
}
