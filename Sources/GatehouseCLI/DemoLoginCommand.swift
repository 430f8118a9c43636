import ArgumentParser
import Foundation
import GatehouseClient
import GatehouseProtocol

/// `gatehouse login`: the RememberMe sample in a terminal: UserLogin with username, password and remember-me.
struct DemoLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Demo: log in to UserLogin (username, password, remember me) and obtain a token for it."
    )

    @OptionGroup var options: DemoOptions

    @Option(help: "The user-login security check.")
    var securityCheck: String = "UserLogin"

    func run() async throws {
        let terminal = Terminal.shared
        let client = try options.client(defaultApp: "com.sample.pincodeswift")
        let check = securityCheck
        // Wrong credentials bring the check's challenge: ask again, with the server's message.
        try client.registerChallengeHandler(securityCheck: check, onFailure: { failure in
            terminal.say(failure["failure"]?.stringValue ?? "Login failed.")
        }) { challenge in
            let message = challenge["errorMsg"]?.stringValue ?? "Please log in."
            let remaining = challenge["remainingAttempts"]?.intValue.map { $0 == 1 ? " (1 attempt left)" : " (\($0) attempts left)" } ?? ""
            terminal.say(message + remaining)
            guard let credentials = await Self.askCredentials(terminal) else { return .cancel }
            return .answer(credentials)
        }
        terminal.say("UserLogin demo at \(options.server)")
        do {
            guard let credentials = await Self.askCredentials(terminal) else { throw GatehouseClientError.challengeCancelled(securityCheck: check) }
            let success = try await client.login(securityCheck: check, credentials: credentials)
            let user = success["user"]?["displayName"]?.stringValue ?? success["user"]?["id"]?.stringValue ?? "?"
            terminal.say("Welcome, \(user)!")
            let token = try await client.obtainAccessToken(forScope: check)
            terminal.say("Token obtained (\(token.summary)).")
        } catch {
            if (error as? GatehouseClientError)?.code == .securityCheckFailed {} else { terminal.say("Not logged in: \(error)") }
            throw ExitCode(1)
        }
    }

    static func askCredentials(_ terminal: Terminal) async -> JSONObject? {
        guard let username = await terminal.ask("Username:"), let password = await terminal.ask("Password:"),
            let remember = await terminal.ask("Remember me? (y/n):")
        else { return nil }
        return ["username": .string(username), "password": .string(password), "rememberMe": .bool(remember.lowercased().hasPrefix("y"))]
    }
}
