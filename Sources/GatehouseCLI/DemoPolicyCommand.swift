import ArgumentParser
import GatehouseServer

/// `gatehouse demo-policy`: prints the demo policy, a starting point for a policy file of one's own.
struct DemoPolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-policy",
        abstract: "Print the demo policy (YAML), to start a policy file from: gatehouse demo-policy > policy.yaml")

    func run() {
        print(DemoPolicy.yaml)
    }
}
