import ArgumentParser
import Foundation
import HummingbirdBcrypt

/// `gatehouse hash-password`: prints the bcrypt hash for a policy's `users[].passwordHash`.
struct HashPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Read a password from standard input and print its bcrypt hash for the policy file."
    )

    @Option(help: "The bcrypt cost (10 to 14).")
    var cost: UInt8 = 12

    func run() throws {
        guard (4...31).contains(cost) else { throw ValidationError("cost must be between 4 and 31") }
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("no password on standard input")
        }
        print(Bcrypt.hash(password, cost: cost))
    }
}
