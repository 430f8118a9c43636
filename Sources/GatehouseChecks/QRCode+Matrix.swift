/// The drawing of a QR code's modules: function patterns, the codewords' zigzag, masks and the penalty that picks one.
extension QRCode {
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
}
