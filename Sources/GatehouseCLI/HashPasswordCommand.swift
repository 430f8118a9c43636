import ArgumentParser
import Foundation
import GatehouseChecks
import GatehouseProtocol
import HummingbirdBcrypt

/// `gatehouse hash-password`: prints the bcrypt hash for a policy's `users[].passwordHash`.
struct HashPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Read a password from standard input and print its bcrypt hash for the policy file."
    )

    @Option(help: "The bcrypt cost, 4 to 15 (each step doubles the time of a login; 10 to 14 is usual; policies refuse more than 15).")
    var cost: UInt8 = 12

    func validate() throws {
        guard (4...PasswordVerifier.maximumCost).contains(cost) else { throw ValidationError("--cost must be between 4 and \(PasswordVerifier.maximumCost)") }
    }

    @Flag(help: ArgumentHelp(
        "Make a new confidential client's secret instead of reading one: prints the secret (256 random bits, base64url), then its hash.",
        discussion: "A confidential client is never locked by its id (anyone could lock it out): its secret must be long and random enough that guessing is pointless."))
    var newClientSecret = false

    func run() throws {
        if newClientSecret {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let secret = Base64URL.encode(bytes)
            print(secret)
            print(Bcrypt.hash(secret, cost: cost))
            return
        }
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw CommandFailure("no password on standard input")
        }
        print(Bcrypt.hash(password, cost: cost))
    }
}
