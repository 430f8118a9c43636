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

    /// The modules being drawn, and which belong to function patterns (never masked).
    struct Matrix {
        let version: Int
        let size: Int
        var modules: [[Bool]]
        var isFunction: [[Bool]]

        init(version: Int) {
            self.version = version
            size = version * 4 + 17
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            isFunction = modules
        }

        mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            isFunction[y][x] = true
        }

        /// The centres of the alignment patterns on each axis.
        var alignmentPositions: [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var positions = [6]
            var position = size - 7
            for _ in 0..<count - 1 {
                positions.insert(position, at: 1)
                position -= step
            }
            return positions
        }

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<size).contains(cx + dx) && (0..<size).contains(cy + dy) {
                        let distance = max(abs(dx), abs(dy))
                        set(cx + dx, cy + dy, distance != 2 && distance != 4)
                    }
                }
            }
            let positions = alignmentPositions
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    let last = positions.count - 1
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormatBits(mask: 0)   // reserves the format areas; drawn again with the mask chosen
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for index in 0..<18 {
                    let dark = (bits >> index) & 1 == 1
                    let a = size - 11 + index % 3, b = index / 3
                    set(a, b, dark)
                    set(b, a, dark)
                }
            }
        }

        /// Level M's format bits (`00`) with `mask`, BCH-coded and masked, in both places; the dark module.
        mutating func drawFormatBits(mask: Int) {
            let data = 0 << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0..<6 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)
        }

        /// The codewords' bits in the standard's zigzag, two columns at a time from the bottom right.
        mutating func drawCodewords(_ data: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for step in 0..<2 {
                        let x = right - step
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        if !isFunction[y][x], index < data.count * 8 {
                            modules[y][x] = (data[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        mutating func apply(mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !isFunction[y][x] {
                    let invert = switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    if invert { modules[y][x].toggle() }
                }
            }
        }

        /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, the balance of dark.
        func penalty() -> Int {
            var total = 0
            let columns = (0..<size).map { x in modules.map { $0[x] } }
            for line in modules + columns {
                var run = 1
                for index in 1..<size {
                    if line[index] == line[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { total += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { total += run - 2 }
                // 1:1:3:1:1 with four light modules on one side.
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                for start in 0...(size - 7) where Array(line[start..<start + 7]) == pattern {
                    let before = start >= 4 && !line[start - 4..<start].contains(true)
                    let after = start + 11 <= size && !line[start + 7..<start + 11].contains(true)
                    if before || after { total += 40 }
                }
            }
            for y in 0..<size - 1 {
                for x in 0..<size - 1 {
                    let color = modules[y][x]
                    if modules[y][x + 1] == color, modules[y + 1][x] == color, modules[y + 1][x + 1] == color { total += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let cells = size * size
            total += (abs(dark * 20 - cells * 10) + cells - 1) / cells * 10 - 10
            return total
        }
    }

    /// Reed–Solomon over GF(256) with the polynomial 0x11D, as QR codes use it.
    enum ReedSolomon {
        static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
            var z: Int = 0
            for index in stride(from: 7, through: 0, by: -1) {
                z = (z << 1) ^ ((z >> 7) * 0x11D)
                z ^= ((Int(y) >> index) & 1) * Int(x)
            }
            return UInt8(z & 0xFF)
        }

        static func divisor(degree: Int) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: degree)
            result[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for index in 0..<degree {
                    result[index] = multiply(result[index], root)
                    if index + 1 < degree { result[index] ^= result[index + 1] }
                }
                root = multiply(root, 0x02)
            }
            return result
        }

        static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: divisor.count)
            for byte in data {
                let factor = byte ^ result.removeFirst()
                result.append(0)
                for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
            }
            return result
        }
    }
}
