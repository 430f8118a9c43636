import ArgumentParser
import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import Logging
import NIOCore
import NIOPosix

/// `gatehouse echo`: KAAZING's WebSocket echo demo client in a terminal: connects through the
/// gateway, asks for a user name and password like the login pop-up, echoes lines, gives up after the retry limit.
struct DemoEchoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "Demo: a WebSocket echo through the gateway, logging in when challenged and giving up after --max-tries."
    )

    @Option(help: "The protected WebSocket's URL.")
    var url: String = "ws://127.0.0.1:8090/echo"

    @Option(help: "Refused answers before giving up (the seed gives up after 2).")
    var maxTries: Int = 2

    func validate() throws {
        guard maxTries >= 1 else { throw ValidationError("--max-tries must be 1 or more") }
        guard let parsed = URL(string: url), ["ws", "wss"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw ValidationError("--url must be a ws:// or wss:// URL")
        }
    }

    func run() async throws {
        let terminal = Terminal.shared
        let login = ClosureLoginHandler { request in
            terminal.say("Login required: \(request.realm ?? request.location.absoluteString)")
            guard let username = await terminal.ask("Username:"), let password = await terminal.ask("Password:") else { return nil }
            return PasswordCredentials(username: username, password: password)
        }
        var logger = Logger(label: "gatehouse-echo")
        logger.logLevel = .warning
        terminal.say("Connecting to \(url)")
        do {
            // KAAZING's extended handshake: the login is asked inside the WebSocket, so a refusal says its status.
            let close = try await GatewayWebSocketClient.connectInBand(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: login), maxAttempts: maxTries, logger: logger
            ) { inbound, outbound, _ in
                terminal.say("Connected. Type a line to send it; end the input to disconnect.")
                var messages = inbound.makeAsyncIterator()
                while let line = await terminal.ask(">") {
                    try await outbound.write(.text(line))
                    guard let message = try await messages.next() else { return }
                    switch message {
                    case .text(let text): terminal.say("echo: \(text)")
                    case .binary(let data): terminal.say("echo: \(data.readableBytes) bytes")
                    }
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
            if let close, close.closeCode != .normalClosure {
                terminal.say("Closed by the gateway: \(close.reason ?? "\(close.closeCode)")")
            } else {
                terminal.say("Disconnected.")
            }
        } catch let error as GatewayClientError {
            terminal.say(error.code == .refused ? "Refused: \(error)" : "Gave up: \(error)")
            throw ExitCode(1)
        } catch let error as IOError {
            // The gateway is not there (no WebSocket was opened): said in words, not as NIO's dump.
            terminal.say("Cannot reach \(url): \(CommandFailure.words(for: error))")
            throw ExitCode(1)
        } catch let error as NIOConnectionError {
            // A host name with every address refused.
            terminal.say("Cannot reach \(url): \(error.connectionErrors.first.map { CommandFailure.words(for: $0.error) } ?? "no address answered")")
            throw ExitCode(1)
        }
    }
}
