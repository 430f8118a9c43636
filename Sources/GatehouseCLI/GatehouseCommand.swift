import ArgumentParser
import Foundation
import GatehouseHTTP
import GatehouseServer

/// The executable: options from the environment (``EnvironmentOptions``), then the command line.
@main
enum GatehouseMain {
    static func main() async {
        StandardErrorLogHandler.bootstrap()
        // SIGHUP asks a server to reload (`systemctl reload`): `serve` and `gateway` read their TLS files again when
        // they serve TLS (ReloadableTLS traps it then). Ignored otherwise, so that a reload never stops a node.
        signal(SIGHUP, SIG_IGN)
        let arguments = EnvironmentOptions.apply(to: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        await GatehouseCommand.main(arguments)
    }
}

/// `gatehouse`: the server, its demos and tools.
struct GatehouseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "A challenge-based authorization server that speaks the MobileFirst 8.0 runtime protocol.",
        version: "gatehouse \(Gatehouse.version) (MobileFirst 8.0 runtime protocol), commit \(BuildCommit.value)",
        subcommands: [ServeCommand.self, KeysCommand.self, HashPasswordCommand.self, DemoPolicyCommand.self, DemoCaptchaCommand.self, DemoPinCodeCommand.self, DemoLoginCommand.self, GatewayCommand.self, DemoEchoCommand.self, StoreCommand.self, ImportMobileFirstCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
