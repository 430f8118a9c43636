import ArgumentParser
import Foundation
import GatehousePostgres
import GatehouseSQLite
import GatehouseServer
import GatehouseStore
import Logging

/// `gatehouse keys`: the token-signing keys in the store, for operators: list, rotate, retire.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List, rotate or retire the token-signing keys in the store (every node picks the change up).",
        subcommands: [List.self, Rotate.self, Retire.self],
        defaultSubcommand: List.self
    )

    /// Where the store is: the embedded one in `--data`, or PostgreSQL.
    struct StoreOptions: ParsableArguments {
        @Option(help: "The folder of the embedded database.")
        var data: String = ".gatehouse"

        @Option(help: ArgumentHelp("A PostgreSQL database (postgres://...), instead of the embedded one.", valueName: "url"))
        var database: String?

        /// Runs `body` with the store open.
        func withStore<T>(_ body: (any GatehouseStore) async throws -> T) async throws -> T {
            if let database {
                return try await PostgresStore.with(try PostgresLocation(url: database), logger: Logger(label: "gatehouse")) { try await body($0) }
            }
            let path = SQLiteStore.path(inDataDirectory: data)
            guard FileManager.default.fileExists(atPath: path) else { throw CommandFailure("No store at \(path); start `gatehouse serve --data \(data)` once first.") }
            return try await body(try SQLiteStore(path: path))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys, oldest first; the last usable one signs.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let keys = try await store.withStore { try await $0.signingKeys() }
            let formatter = ISO8601DateFormatter()
            func date(_ ms: Int64) -> String { formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)) }
            // The newest usable key of each algorithm signs: ES256 the access tokens, RS256 the RS256 clients' id_tokens.
            let current = Set(Dictionary(grouping: keys.filter { $0.retiredAt == nil }, by: \.algorithm).compactMap { $0.value.last?.kid })
            for key in keys {
                let status = key.retiredAt.map { "retired \(date($0))" } ?? (current.contains(key.kid) ? "current" : "verifies")
                print("\(key.kid)  \(key.algorithm)  created \(date(key.createdAt))  \(status)")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store a new key that becomes current on every node; older keys keep verifying.")
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("ES256 (access tokens, and ES256 clients' id_tokens) or RS256 (RS256 OpenID clients' id_tokens).",
                                   valueName: "algorithm"))
        var algorithm = "ES256"

        func run() async throws {
            let kid: String
            switch algorithm.uppercased() {
            case "ES256": kid = try await store.withStore { try await TokenSigner.rotate(in: $0) }
            case "RS256": kid = try await store.withStore { try await TokenSigner.rotateRS256(in: $0) }
            default: throw CommandFailure("--algorithm must be ES256 or RS256, not \(algorithm)")
            }
            print("New current \(algorithm.uppercased()) key \(kid)")
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retire a key: no node signs or verifies with it any more and it leaves the JWKS (a leaked key stops working).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The key's kid (see `gatehouse keys list`).")
        var kid: String

        func run() async throws {
            do {
                guard try await store.withStore({ try await TokenSigner.retire(kid: kid, in: $0) }) else {
                    print("\(kid) was retired already.")
                    return
                }
            } catch StoreError.notFound {
                throw CommandFailure("No key \(kid) in the store.")
            } catch let error as TokenSigner.KeyError {
                throw CommandFailure("Cannot retire \(kid): \(error)")
            }
            print("Retired \(kid); every node refuses its tokens from its next read of the store (at once for its JWKS).")
        }
    }
}
