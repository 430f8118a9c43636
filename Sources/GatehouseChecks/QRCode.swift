/// A QR code (ISO/IEC 18004) of a text in byte mode at error-correction level M, versions 1 to 20 (up to 666 bytes):
/// what an authenticator app scans to take a TOTP secret (``TOTP``'s enrolment shows its `otpauth://` URI as one),
/// drawn as SVG.
///
/// The smallest version that holds the text; the mask with the lowest penalty (the standard's four rules) unless one
/// is asked for.
public struct QRCode: Sendable, Equatable {
    /// 1 to 20.
    public let version: Int
    /// 0 to 7.
    public let mask: Int
    /// Rows of modules, `true` for dark, without the quiet zone.
    public let modules: [[Bool]]

    /// The side in modules.
    public var size: Int { modules.count }

    /// The code of `text`'s UTF-8 bytes; `nil` when it holds more than version 20 at level M does.
    public init?(text: String, mask forcedMask: Int? = nil) {
        let bytes = Array(text.utf8)
        guard let version = (1...20).first(where: { Self.dataCapacity($0) * 8 >= Self.dataBits(count: bytes.count, version: $0) }) else { return nil }
        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.drawCodewords(Self.codewords(bytes, version: version))
        let masks = forcedMask.map { [$0] } ?? Array(0..<8)
        var best: (mask: Int, penalty: Int, modules: [[Bool]])?
        for mask in masks where (0..<8).contains(mask) {
            var candidate = matrix
            candidate.apply(mask: mask)
            candidate.drawFormatBits(mask: mask)
            let penalty = forcedMask == nil ? candidate.penalty() : 0
            if best == nil || penalty < best!.penalty { best = (mask, penalty, candidate.modules) }
        }
        guard let best else { return nil }
        self.version = version
        self.mask = best.mask
        modules = best.modules
    }

    /// An SVG drawing: one path of dark runs on white, with the standard's quiet zone of 4 modules, `pixels` wide.
    public func svg(pixels: Int = 264) -> String {
        let side = size + 8
        var path = ""
        for (y, row) in modules.enumerated() {
            var x = 0
            while x < size {
                guard row[x] else { x += 1; continue }
                var run = 1
                while x + run < size, row[x + run] { run += 1 }
                path += "M\(x + 4),\(y + 4)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(pixels)" height="\#(pixels)" viewBox="0 0 \#(side) \#(side)" shape-rendering="crispEdges">"#
            + #"<rect width="100%" height="100%" fill="white"/><path fill="black" d="\#(path)"/></svg>"#
    }

    // MARK: The tables of level M

    /// Error-correction codewords per block at level M, by version (1-based).
    static let eccPerBlock = [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26]
    /// Blocks at level M, by version.
    static let blocks = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16]

    /// All codewords of a version: its modules less the function patterns, in bytes.
    static func rawCodewords(_ version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { modules -= 36 }
        }
        return modules / 8
    }

    static func dataCapacity(_ version: Int) -> Int {
        rawCodewords(version) - eccPerBlock[version - 1] * blocks[version - 1]
    }

    /// Mode, count and data bits of `count` bytes.
    static func dataBits(count: Int, version: Int) -> Int { 4 + (version < 10 ? 8 : 16) + count * 8 }

    /// The data codewords (mode, count, bytes, terminator, padding) with each block's error correction, interleaved.
    static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for index in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> index) & 1 == 1) } }
        append(0b0100, 4)
        append(bytes.count, version < 10 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCapacity(version) * 8
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < dataCapacity(version) {
            data.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        // Blocks: the short ones first, each with its error correction; then read column by column.
        let count = blocks[version - 1], eccLength = eccPerBlock[version - 1], raw = rawCodewords(version)
        let shortBlocks = count - raw % count
        let shortLength = raw / count
        let divisor = ReedSolomon.divisor(degree: eccLength)
        var split: [[UInt8]] = []
        var offset = 0
        for index in 0..<count {
            let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
            var block = Array(data[offset..<offset + length])
            offset += length
            let ecc = ReedSolomon.remainder(block, divisor: divisor)
            if index < shortBlocks { block.append(0) }
            split.append(block + ecc)
        }
        var result: [UInt8] = []
        for column in 0..<split[0].count {
            for (index, block) in split.enumerated() where column != shortLength - eccLength || index >= shortBlocks {
                result.append(block[column])
            }
        }
        return result
    }
}
