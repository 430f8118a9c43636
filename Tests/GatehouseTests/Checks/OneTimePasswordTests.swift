import Foundation
import GatehouseChecks
import GatehouseProtocol
import Testing

/// RFC 6238 codes: the RFC's own test vectors, and codes made by PyPI's pyotp (what other servers and tools make
/// from the same secret), and the window around the current step.
@Suite(.timeLimit(.minutes(3))) struct OneTimePasswordTests {
    /// RFC 6238 Appendix B: seconds since the epoch → the 8-digit codes of SHA-1, SHA-256 and SHA-512, each with
    /// its own seed (the ASCII digits "1234567890" repeated to 20, 32 and 64 bytes).
    static let vectors: [(time: Int64, sha1: String, sha256: String, sha512: String)] = [
        (59, "94287082", "46119246", "90693936"),
        (1_111_111_109, "07081804", "68084774", "25091201"),
        (1_111_111_111, "14050471", "67062674", "99943326"),
        (1_234_567_890, "89005924", "91819424", "93441116"),
        (2_000_000_000, "69279037", "90698825", "38618901"),
        (20_000_000_000, "65353130", "77737706", "47863826"),
    ]

    static func seed(_ length: Int) -> [UInt8] { Array(String(repeating: "1234567890", count: 7).utf8.prefix(length)) }

    @Test func theRFCsTestVectors() {
        let sha1 = OneTimePassword(secret: Self.seed(20), algorithm: .sha1, digits: 8)
        let sha256 = OneTimePassword(secret: Self.seed(32), algorithm: .sha256, digits: 8)
        let sha512 = OneTimePassword(secret: Self.seed(64), algorithm: .sha512, digits: 8)
        for vector in Self.vectors {
            #expect(sha1.code(at: vector.time * 1000) == vector.sha1, "SHA1 at \(vector.time)")
            #expect(sha256.code(at: vector.time * 1000) == vector.sha256, "SHA256 at \(vector.time)")
            #expect(sha512.code(at: vector.time * 1000) == vector.sha512, "SHA512 at \(vector.time)")
        }
        // Six digits are the last six of the same value (RFC 4226 §5.3: modulo 10^digits).
        #expect(OneTimePassword(secret: Self.seed(20)).code(at: 59_000) == "287082")
    }

    @Test func codesAgreeWithPyotp() async throws {
        // Random secrets, each algorithm and length, times around now and far off: the same codes pyotp makes.
        var cases: [(secret: String, algorithm: OneTimePassword.Algorithm, digits: Int, time: Int64)] = []
        let now = Int64(Date().timeIntervalSince1970)
        for index in 0..<24 {
            let secret = Base32.encode((0..<[16, 20, 32][index % 3]).map { _ in UInt8.random(in: 0...255) })
            let algorithm = OneTimePassword.Algorithm.allCases[index % 3]
            cases.append((secret, algorithm, 6 + index % 3, index % 2 == 0 ? now + Int64(index * 17) : Int64.random(in: 0...4_000_000_000)))
        }
        let script = """
            import hashlib, json, sys, pyotp
            for line in sys.stdin.read().splitlines():
                secret, algorithm, digits, time = line.split()
                print(pyotp.TOTP(secret, digits=int(digits), digest=getattr(hashlib, algorithm.lower())).at(int(time)))
            """
        let input = cases.map { "\($0.secret) \($0.algorithm.rawValue) \($0.digits) \($0.time)" }.joined(separator: "\n")
        let scriptPath = NSTemporaryDirectory() + "gatehouse-pyotp-\(UUID().uuidString).py"
        let inputPath = scriptPath + ".in"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        try input.write(toFile: inputPath, atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(atPath: scriptPath)
            try? FileManager.default.removeItem(atPath: inputPath)
        }
        let run = try await runOffThePool("/bin/sh", ["-c", "python3 '\(scriptPath)' < '\(inputPath)'"])
        try #require(run.status == 0, "pyotp (PyPI; scripts/test installs it): \(run.output)")
        let theirs = run.output.split(separator: "\n").map(String.init)
        try #require(theirs.count == cases.count, "\(run.output)")
        for (index, item) in cases.enumerated() {
            let ours = OneTimePassword(secret: try #require(Base32.decode(item.secret)), algorithm: item.algorithm, digits: item.digits)
            #expect(ours.code(at: item.time * 1000) == theirs[index], "\(item)")
        }
    }

    @Test func aCodeMatchesItsStepWithinTheWindowOnly() {
        let generator = OneTimePassword(secret: Self.seed(20))
        let now: Int64 = 1_700_000_015_000
        let step = generator.step(at: now)
        #expect(generator.matchingStep(of: generator.code(atStep: step), at: now) == step)
        #expect(generator.matchingStep(of: generator.code(atStep: step - 1), at: now) == step - 1)
        #expect(generator.matchingStep(of: generator.code(atStep: step + 1), at: now) == step + 1)
        #expect(generator.matchingStep(of: generator.code(atStep: step - 2), at: now) == nil)
        #expect(generator.matchingStep(of: generator.code(atStep: step - 1), at: now, window: 0) == nil)
        // Spaces are what people type between groups; anything else is a wrong code.
        let code = generator.code(atStep: step)
        #expect(generator.matchingStep(of: code.prefix(3) + " " + code.dropFirst(3), at: now) == step)
        #expect(generator.matchingStep(of: "", at: now) == nil)
        #expect(generator.matchingStep(of: code + "0", at: now) == nil)
    }

    @Test func base32AndTheURI() {
        // RFC 4648 §10's vectors, without padding.
        for (text, encoded) in [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")] {
            #expect(Base32.encode(Array(text.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(text.utf8))
        }
        #expect(Base32.decode("mzxw6ytboi======") == Array("foobar".utf8))
        #expect(Base32.decode("MZXW1") == nil)
        let uri = OneTimePassword(secret: Array("foobar".utf8), algorithm: .sha256, digits: 8, period: 60).uri(issuer: "Example Bank", account: "john@example.com")
        #expect(uri == "otpauth://totp/Example%20Bank:john%40example.com?secret=MZXW6YTBOI&issuer=Example%20Bank&algorithm=SHA256&digits=8&period=60")
    }
}
