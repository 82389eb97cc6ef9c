/// A QR code (ISO/IEC 18004) for a short text such as a URL: byte mode, error correction level M, the
/// smallest version (1–40) that holds it, the mask with the lowest penalty. Pure: `dev` prints one so a
/// phone's camera opens the address instead of someone typing it, and every short link has one as SVG and PNG.
public struct QRCode: Sendable {
    /// `modules[y][x]`, true for dark.
    public let modules: [[Bool]]
    public let version: Int
    public var size: Int { modules.count }

    /// Nil when the text is longer than a version 40 code holds at level M (2,331 bytes).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let version = (1...40).first(where: { Self.dataCapacityBits($0) >= Self.encodedBits(bytes.count, version: $0) }) else {
            return nil
        }
        self.version = version
        var builder = Builder(version: version)
        builder.drawFunctionPatterns()
        builder.drawCodewords(Self.interleavedCodewords(Self.dataCodewords(bytes, version: version), version: version))
        builder.applyBestMask()
        modules = builder.modules
    }

    // MARK: - Capacity (level M)

    /// Error correction codewords per block, and blocks, for level M by version.
    private static let eccPerBlock = [
        0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        28, 28,
        28, 28, 28, 28, 28, 28,
    ]
    private static let blockCount = [
        0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40,
        43, 45, 47, 49,
    ]

    /// Modules left for data and error correction once the function patterns are drawn.
    static func rawDataModules(_ version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    static func totalCodewords(_ version: Int) -> Int { rawDataModules(version) / 8 }
    static func dataCodewordCount(_ version: Int) -> Int { totalCodewords(version) - eccPerBlock[version] * blockCount[version] }
    static func dataCapacityBits(_ version: Int) -> Int { dataCodewordCount(version) * 8 }
    static func countBits(_ version: Int) -> Int { version <= 9 ? 8 : 16 }
    static func encodedBits(_ count: Int, version: Int) -> Int {
        count < (1 << countBits(version)) ? 4 + countBits(version) + count * 8 : Int.max
    }

    // MARK: - Codewords

    static func dataCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)  // byte mode
        append(bytes.count, countBits(version))
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCapacityBits(version)
        append(0, min(4, capacity - bits.count))  // terminator
        append(0, (8 - bits.count % 8) % 8)
        var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while codewords.count < capacity / 8 {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data into blocks, adds each block's Reed-Solomon codewords, and interleaves them.
    static func interleavedCodewords(_ data: [UInt8], version: Int) -> [UInt8] {
        let blocks = blockCount[version]
        let eccLength = eccPerBlock[version]
        let total = totalCodewords(version)
        let shortBlocks = blocks - total % blocks
        let shortLength = total / blocks
        let divisor = ReedSolomon.generator(degree: eccLength)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blocks {
            let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<(offset + length)])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, divisor: divisor))
        }
        var result: [UInt8] = []
        for column in 0..<(shortLength - eccLength + 1) {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<eccLength {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }

    // MARK: - Drawing

    struct Builder {
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

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            drawFinder(3, 3)
            drawFinder(size - 4, 3)
            drawFinder(3, size - 4)
            let positions = alignmentPositions
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    let nearFinder = (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0)
                    if !nearFinder { drawAlignment(x, y) }
                }
            }
            drawFormatBits(mask: 0)  // reserves the format areas; redrawn with the chosen mask
            drawVersion()
        }

        var alignmentPositions: [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var result = [6]
            for index in 0..<(count - 1) { result.insert(size - 7 - index * step, at: 1) }
            return result
        }

        mutating func drawFinder(_ centerX: Int, _ centerY: Int) {
            for dy in -4...4 {
                for dx in -4...4 {
                    let x = centerX + dx
                    let y = centerY + dy
                    guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                    let distance = max(abs(dx), abs(dy))
                    set(x, y, distance != 2 && distance != 4)
                }
            }
        }

        mutating func drawAlignment(_ centerX: Int, _ centerY: Int) {
            for dy in -2...2 {
                for dx in -2...2 { set(centerX + dx, centerY + dy, max(abs(dx), abs(dy)) != 1) }
            }
        }

        mutating func drawFormatBits(mask: Int) {
            let data = 0b00 << 3 | mask  // level M
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)  // the dark module
        }

        mutating func drawVersion() {
            guard version >= 7 else { return }
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let a = size - 11 + index % 3
                let b = index / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }

        /// The zigzag from the bottom right, two columns at a time, skipping the vertical timing pattern.
        mutating func drawCodewords(_ codewords: [UInt8]) {
            var bitIndex = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let x = right - offset
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        guard !isFunction[y][x], bitIndex < codewords.count * 8 else { continue }
                        modules[y][x] = (codewords[bitIndex >> 3] >> (7 - (bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                }
                right -= 2
            }
        }

        static func maskApplies(_ mask: Int, _ x: Int, _ y: Int) -> Bool {
            switch mask {
            case 0: return (x + y) % 2 == 0
            case 1: return y % 2 == 0
            case 2: return x % 3 == 0
            case 3: return (x + y) % 3 == 0
            case 4: return (x / 3 + y / 2) % 2 == 0
            case 5: return x * y % 2 + x * y % 3 == 0
            case 6: return (x * y % 2 + x * y % 3) % 2 == 0
            default: return ((x + y) % 2 + x * y % 3) % 2 == 0
            }
        }

        mutating func applyMask(_ mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !isFunction[y][x] && Self.maskApplies(mask, x, y) { modules[y][x].toggle() }
            }
        }

        mutating func applyBestMask() {
            var best = (mask: 0, penalty: Int.max)
            for mask in 0..<8 {
                var trial = self
                trial.applyMask(mask)
                trial.drawFormatBits(mask: mask)
                let penalty = trial.penalty
                if penalty < best.penalty { best = (mask, penalty) }
            }
            applyMask(best.mask)
            drawFormatBits(mask: best.mask)
        }

        /// The standard's four penalty rules: runs, 2×2 blocks, finder look-alikes, dark balance.
        var penalty: Int {
            var total = 0
            let columns = (0..<size).map { x in (0..<size).map { y in modules[y][x] } }
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
                let padded = [Bool](repeating: false, count: 4) + line + [Bool](repeating: false, count: 4)
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                for start in 0...(padded.count - 11) {
                    let window = padded[start..<(start + 11)]
                    if Array(window.prefix(7)) == pattern && window.suffix(4).allSatisfy({ !$0 }) { total += 40 }
                    if Array(window.suffix(7)) == pattern && window.prefix(4).allSatisfy({ !$0 }) { total += 40 }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let color = modules[y][x]
                    if modules[y][x + 1] == color && modules[y + 1][x] == color && modules[y + 1][x + 1] == color { total += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let cells = size * size
            let k = (abs(dark * 20 - cells * 10) + cells - 1) / cells - 1
            return total + max(0, k) * 10
        }
    }
}
