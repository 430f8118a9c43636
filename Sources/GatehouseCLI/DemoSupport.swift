import ArgumentParser
import Foundation
import GatehouseClient
import GatehouseProtocol
import Synchronization

/// The options every demo takes.
struct DemoOptions: ParsableArguments {
    @Option(help: "The Gatehouse (or MobileFirst 8.0) server's base URL.")
    var server: String = "http://127.0.0.1:8080"

    @Option(help: "The application id (the demo policy knows com.sample.pincodeswift and com.sample.simplecaptcha).")
    var app: String?

    @Option(help: "The client platform.")
    var platform: String = "ios"

    @Option(name: .customLong("app-version"), help: "The application version.")
    var appVersion: String = "1.0"

    @Option(help: "The folder of the demo's key store (its key pair and client id).")
    var data: String = (NSTemporaryDirectory() as NSString).appendingPathComponent("gatehouse-demo")

    @Option(help: "Seconds a challenge may stay unanswered.")
    var challengeTimeout: Int = 120

    /// A client for `defaultApp` unless `--app` names another, keeping its registration in `--data`.
    func client(defaultApp: String) throws -> GatehouseClient {
        guard let url = URL(string: server), url.scheme != nil else { throw ValidationError("--server must be an URL such as http://127.0.0.1:8080") }
        let application = app ?? defaultApp
        let configuration = ClientConfiguration(
            serverURL: url, applicationID: application, platform: platform, version: appVersion, challengeTimeout: .seconds(challengeTimeout))
        let store = FileKeyStore(directory: URL(fileURLWithPath: data), name: "\(application)-\(platform)")
        return GatehouseClient(configuration: configuration, keyStore: store)
    }
}

/// The demo's terminal: prompts on standard output (unbuffered, so a driving program sees them at once) and
/// answers from standard input, read on a thread of its own so that no task blocks on it.
final class Terminal: Sendable {
    static let shared = Terminal()

    private struct State {
        var lines: [String] = []
        var ended = false
        var waiter: CheckedContinuation<String?, Never>?
        var started = false
    }
    private let state = Mutex(State())

    /// Writes `text` at once.
    func say(_ text: String, terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Shows `prompt` and waits for a line; `nil` at the end of the input.
    func ask(_ prompt: String) async -> String? {
        say(prompt, terminator: " ")
        return await nextLine()?.trimmingCharacters(in: .whitespaces)
    }

    private func nextLine() async -> String? {
        startReading()
        return await withCheckedContinuation { continuation in
            let ready: String?? = state.withLock { state in
                if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                if state.ended { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func startReading() {
        let start = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard start else { return }
        Thread.detachNewThread { [self] in
            while let line = readLine(strippingNewline: true) { deliver(line) }
            deliver(nil)
        }
    }

    private func deliver(_ line: String?) {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            if line == nil { state.ended = true }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if let line { state.lines.append(line) }
            return nil
        }
        waiter?.resume(returning: line)
    }
}

/// A seed challenge handler at the terminal: asks one question and submits the line as one answer field.
class TerminalChallengeHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let terminal: Terminal

    init(securityCheck: String, terminal: Terminal) {
        self.terminal = terminal
        super.init(securityCheck: securityCheck)
    }

    /// Shows `prompt`, then submits `{field: line}`, or cancels (saying `cancelled`) at the end of the input.
    func ask(_ prompt: String, answer field: String, cancelled: String) {
        Task {
            guard let line = await terminal.ask(prompt) else {
                terminal.say(cancelled)
                cancel()
                return
            }
            submitChallengeAnswer([field: .string(line)])
        }
    }
}

extension AccessToken {
    /// `scope RegisteredClient accessRestricted, expires in 60 s`.
    var summary: String { "scope \(scope), expires in \(Int(expiresAt.timeIntervalSinceNow.rounded())) s" }
}
