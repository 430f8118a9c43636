import ArgumentParser
import Foundation
import NIOCore
import PostgresNIO

/// A command that was given right but could not do its work (a file that cannot be read, a port in use, a database
/// that refuses): printed as `Error: <description>` and exit 1, without the usage line that ArgumentParser adds
/// to a `ValidationError` (which stays for options that are wrong in themselves).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// `what` and why it failed, in words rather than a runtime's dump: the system's message for a socket or file
    /// error, PostgreSQL's own message, the place and problem of a decoding error.
    init(_ what: String, _ error: any Error) {
        self.init("\(what): \(Self.words(for: error))")
    }

    static func words(for error: any Error) -> String {
        switch error {
        case let error as IOError:
            // NIO's description repeats the call and the errno in parentheses; the system's message says it.
            return String(cString: strerror(error.errnoCode)).lowercased()
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] { return message }
            return error.underlying.map { words(for: $0) } ?? "\(error.code)"
        case let error as DecodingError:
            return error.sentence(whole: "the text")
        case let error as CocoaError:
            return error.localizedDescription
        default:
            return "\(error)"
        }
    }
}
