import Foundation
import GatehouseChecks
import Testing

/// The enrolment's QR code: module for module what PyPI's qrcode (an independent encoder) makes of the same bytes at
/// level M with the same version and mask — every mask, versions 1 to 20 — and its SVG read back by zxing-cpp (a
/// decoder, as a phone's camera app reads it).
@Suite(.timeLimit(.minutes(3))) struct QRCodeTests {
    static let texts: [String] = [
        "A",
        "otpauth://totp/Gatehouse%20demo:john?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Gatehouse%20demo&algorithm=SHA1&digits=6&period=30",
        "otpauth://totp/Example%20Bank:j%C3%BCrgen?secret=ABC", "Jürgen — 東京",
        String(repeating: "x", count: 271), String(repeating: "0123456789", count: 40), String(repeating: "z", count: 666),
    ]

    /// Runs a Python script (PyPI packages that scripts/test installs) over `input`; its lines of output.
    static func python(_ script: String, input: String) async throws -> [String] {
        let base = NSTemporaryDirectory() + "gatehouse-qr-\(UUID().uuidString)"
        try script.write(toFile: base + ".py", atomically: true, encoding: .utf8)
        try input.write(toFile: base + ".in", atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".py")
            try? FileManager.default.removeItem(atPath: base + ".in")
        }
        let run = try await runOffThePool("/bin/sh", ["-c", "python3 '\(base).py' < '\(base).in'"])
        try #require(run.status == 0, "python3 (qrcode, zxing-cpp, numpy from PyPI; scripts/test installs them): \(run.output)")
        return run.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test func modulesAreThoseOfAnotherEncoderForEveryMask() async throws {
        var cases: [(text: String, mask: Int, code: QRCode)] = []
        for text in Self.texts {
            for mask in 0..<8 { cases.append((text, mask, try #require(QRCode(text: text, mask: mask)))) }
        }
        let theirs = try await Self.python("""
            import sys, qrcode, qrcode.util
            for line in sys.stdin.read().splitlines():
                data, version, mask = line.split()
                qr = qrcode.QRCode(version=int(version), error_correction=qrcode.constants.ERROR_CORRECT_M, mask_pattern=int(mask), border=0)
                qr.add_data(qrcode.util.QRData(bytes.fromhex(data), mode=qrcode.util.MODE_8BIT_BYTE))
                qr.make(fit=False)
                print(''.join('1' if m else '0' for row in qr.modules for m in row))
            """, input: cases.map { item in
                Array(item.text.utf8).map { String(format: "%02x", $0) }.joined() + " \(item.code.version) \(item.mask)"
            }.joined(separator: "\n"))
        try #require(theirs.count == cases.count)
        for (index, item) in cases.enumerated() {
            let ours = item.code.modules.flatMap { $0 }.map { $0 ? "1" : "0" }.joined()
            #expect(ours == theirs[index], "\(item.text.prefix(40))… version \(item.code.version) mask \(item.mask)")
        }
        // The smallest version that holds the bytes: 1 for one byte, 20 for 666, none beyond.
        #expect(QRCode(text: "A")?.version == 1)
        #expect(QRCode(text: String(repeating: "z", count: 666))?.version == 20)
        #expect(QRCode(text: String(repeating: "z", count: 667)) == nil)
        #expect(QRCode(text: Self.texts[1])?.version == 8)
    }

    @Test func aDecoderReadsTheSVGWithTheMaskChosen() async throws {
        // The SVG's runs drawn into a bitmap (4 pixels a module), read by zxing-cpp.
        let svgs = try Self.texts.map { try #require(QRCode(text: $0)).svg() }
        let read = try await Self.python("""
            import sys, re, numpy, zxingcpp
            for svg in sys.stdin.read().splitlines():
                side = int(re.search(r'viewBox="0 0 (\\d+) ', svg).group(1))
                image = numpy.full((side * 4, side * 4), 255, dtype=numpy.uint8)
                for x, y, n in re.findall(r'M(\\d+),(\\d+)h(\\d+)', svg):
                    x, y, n = int(x), int(y), int(n)
                    image[y * 4:(y + 1) * 4, x * 4:(x + n) * 4] = 0
                found = zxingcpp.read_barcodes(image)
                print(found[0].bytes.hex() if found else 'none')
            """, input: svgs.joined(separator: "\n"))
        try #require(read.count == Self.texts.count)
        for (text, hex) in zip(Self.texts, read) {
            #expect(hex == Array(text.utf8).map { String(format: "%02x", $0) }.joined(), "\(text.prefix(40))")
        }
    }

    @Test func theSVGDrawsEveryDarkModuleInsideAQuietZone() throws {
        let code = try #require(QRCode(text: Self.texts[1]))
        let svg = code.svg()
        #expect(svg.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" width="264" height="264" viewBox="0 0 57 57""#), "version 8: 49 modules and the quiet zone")
        // Runs of dark modules, each "M x,y h n v1 h-n z": together exactly the code's dark modules, 4 modules in.
        var drawn = Set<[Int]>()
        let path = try #require(svg.split(separator: "d=\"").last?.split(separator: "\"").first)
        for run in path.split(separator: "z") {
            let numbers = run.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            for dx in 0..<numbers[2] { drawn.insert([numbers[0] + dx - 4, numbers[1] - 4]) }
        }
        var dark = Set<[Int]>()
        for (y, row) in code.modules.enumerated() { for (x, module) in row.enumerated() where module { dark.insert([x, y]) } }
        #expect(drawn == dark)
    }
}
