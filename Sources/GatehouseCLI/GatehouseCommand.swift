import ArgumentParser

/// `gatehouse`: the server, its demos and tools.
@main
struct GatehouseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "A challenge-based authorization server that speaks the MobileFirst 8.0 runtime protocol.",
        subcommands: [ServeCommand.self, KeysCommand.self, HashPasswordCommand.self, DemoCaptchaCommand.self, DemoPinCodeCommand.self, DemoLoginCommand.self, GatewayCommand.self, DemoEchoCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
