import ArgumentParser
import Foundation
import GatehouseServer
import Hummingbird
import Logging

/// `gatehouse serve`: runs the authorization server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the authorization server (the demo policy on a loopback port when given no options)."
    )

    @Option(help: "The policy file (YAML). Without it, the demo policy runs.")
    var policy: String?

    @Option(help: "The folder of the embedded database.")
    var data: String = ".gatehouse"

    @Option(help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var configuration = ServerConfiguration()
        configuration.policyPath = policy
        configuration.dataDirectory = data
        configuration.host = host
        configuration.port = port
        let demo = policy == nil
        let host = self.host
        let app: any ApplicationProtocol
        do {
            app = try await Gatehouse.makeApplication(configuration, logger: logger) { port in
                Self.printBanner(host: host, port: port, demo: demo)
            }
        } catch let error as PolicyError {
            throw ValidationError("Policy error: \(error)")
        }
        try await app.runService()
    }

    static func printBanner(host: String, port: Int, demo: Bool) {
        let base = "http://\(host):\(port)"
        var text = "Gatehouse listens on \(base) — runtime API at \(base)/mfp/api\n"
        if demo {
            text += """
                Demo policy: checks SimpleCaptcha, PinCodeAttempts (PIN 1234, 3 attempts) and UserLogin (john/demo, jane/secret);
                scope element accessRestricted -> PinCodeAttempts; apps com.sample.pincodeswift and com.sample.simplecaptcha
                (ios, android) and com.sample.web (web).
                Try it:
                  curl -s \(base)/health
                Stop with Ctrl-C.

                """
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
