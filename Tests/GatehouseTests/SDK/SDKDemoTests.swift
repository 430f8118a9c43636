import Foundation
import GatehouseServer
import Synchronization
import Testing

/// A `gatehouse` demo run as a separate process, driven through its standard input like a person at a terminal.
final class DemoRun: Sendable {
    /// The built `gatehouse` executable (`swift build` puts it in `.build/debug`).
    static let executable: URL = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        return root.appendingPathComponent(".build/debug/gatehouse")
    }()
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let transcript = Transcript()

    init(_ arguments: [String]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let reader = output.fileHandleForReading
        let transcript = self.transcript
        Thread.detachNewThread {
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                transcript.state.withLock { $0.text += String(decoding: data, as: UTF8.self) }
            }
        }
    }

    /// Everything the demo printed so far.
    var text: String { transcript.state.withLock { $0.text } }

    /// Waits until the demo printed `expected` after what earlier waits consumed; returns the text up to it.
    @discardableResult
    func expect(_ expected: String, within seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let found = transcript.state.withLock { state -> String? in
                let start = state.consumed ?? state.text.startIndex
                guard let range = state.text.range(of: expected, range: start..<state.text.endIndex) else { return nil }
                state.consumed = range.upperBound
                return String(state.text[start..<range.upperBound])
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the demo did not print \"\(expected)\"; it printed:\n\(text)", sourceLocation: sourceLocation)
        throw TestFailure("demo output missing \"\(expected)\"")
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the demo's standard input (Ctrl-D).
    func endInput() {
        try? input.fileHandleForWriting.close()
    }

    /// The exit status, waiting at most `seconds` (then the demo is killed and the test fails).
    func exitStatus(within seconds: Double = 60) async throws -> Int32 {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            process.terminate()
            throw TestFailure("the demo did not exit within \(seconds) s; it printed:\n\(text)")
        }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { process.terminate() }
        endInput()
    }

    /// Runs a demo against `server` with a fresh key store, and stops it whatever happens.
    static func run<T>(_ command: String, _ server: TestServer, extra: [String] = [], _ body: (DemoRun) async throws -> T) async throws -> T {
        let data = TestServer.temporaryDirectory()
        let demo = try DemoRun([command, "--server", server.baseURL, "--data", data] + extra)
        defer { demo.stop() }
        return try await body(demo)
    }

    /// The sum asked by `X + Y = ?` at the end of `text`.
    static func captchaSum(in text: String) -> Int? {
        guard let line = text.split(separator: "\n").last(where: { $0.contains("= ?") }) else { return nil }
        let operands = line.replacingOccurrences(of: "= ?", with: "").split(separator: "+").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return operands.count == 2 ? operands.reduce(0, +) : nil
    }
}

/// What a demo printed, and how far the test has read it.
final class Transcript: Sendable {
    let state = Mutex<(text: String, consumed: String.Index?)>(("", nil))
}

/// The terminal demos of the seed apps, driven through standard input against a real server.
@Suite(.enabled(if: DemoRun.isBuilt, "needs the built gatehouse executable (swift build)"), .timeLimit(.minutes(3)))
struct SDKDemoTests {
    @Test func pinCodeShowsTheBalanceAfterAWrongThenTheRightPIN() async throws {
        try await TestServer.run { server in
            try await DemoRun.run("pincode", server) { demo in
                try await demo.expect("This data requires a PIN code.")
                try await demo.expect("PIN (3 attempts left):")
                demo.type("0000")
                try await demo.expect("The pin code is not valid.")
                try await demo.expect("PIN (2 attempts left):")
                demo.type("1234")
                try await demo.expect("Balance: 19938.80")
                #expect(try await demo.exitStatus() == 0)
            }
        }
    }

    @Test func pinCodeEndsWithAccountBlocked() async throws {
        try await TestServer.run { server in
            try await DemoRun.run("pincode", server, extra: ["--app", "com.sample.pincodeswift"]) { demo in
                for remaining in ["3 attempts", "2 attempts", "1 attempt"] {
                    try await demo.expect("PIN (\(remaining) left):")
                    demo.type("9999")
                }
                try await demo.expect("Account blocked")
                #expect(try await demo.exitStatus() == 1)
                #expect(!demo.text.contains("Balance"))
            }
        }
    }

    @Test func captchaAsksAgainAfterAWrongAnswer() async throws {
        try await TestServer.run(policy: DemoPolicy.yaml) { server in
            try await DemoRun.run("captcha", server) { demo in
                let first = try await demo.expect("= ?")
                let sum = try #require(DemoRun.captchaSum(in: first))
                demo.type(String(sum + 1))
                try await demo.expect("Wrong answer, try again")
                let second = try await demo.expect("= ?")
                demo.type(String(try #require(DemoRun.captchaSum(in: second))))
                try await demo.expect("Captcha solved.")
                try await demo.expect("Token obtained (scope RegisteredClient SimpleCaptcha")
                try await demo.expect("Obtained again: from the cache, no challenge.")
                #expect(try await demo.exitStatus() == 0)
            }
        }
    }

    @Test func captchaWithoutAnAnswerIsCancelledNotHung() async throws {
        try await TestServer.run(policy: DemoPolicy.yaml) { server in
            try await DemoRun.run("captcha", server) { demo in
                try await demo.expect("= ?")
                demo.endInput()
                try await demo.expect("No token: The challenge of SimpleCaptcha was cancelled.")
                #expect(try await demo.exitStatus() == 1)
            }
        }
    }

    @Test func loginAsksForUsernamePasswordAndRememberMe() async throws {
        try await TestServer.run(policy: DemoPolicy.yaml) { server in
            try await DemoRun.run("login", server) { demo in
                try await demo.expect("Username:")
                demo.type("john")
                try await demo.expect("Password:")
                demo.type("wrong")
                try await demo.expect("Remember me? (y/n):")
                demo.type("n")
                try await demo.expect("Wrong username or password. (2 attempts left)")
                try await demo.expect("Username:")
                demo.type("john")
                try await demo.expect("Password:")
                demo.type("demo")
                try await demo.expect("Remember me? (y/n):")
                demo.type("y")
                try await demo.expect("Welcome, John Doe!")
                try await demo.expect("Token obtained (scope RegisteredClient UserLogin")
                #expect(try await demo.exitStatus() == 0)
            }
        }
    }
}
