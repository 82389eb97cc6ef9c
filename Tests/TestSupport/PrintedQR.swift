import Foundation

/// Reads back a QR code printed as half blocks (two module rows per line, a dark module drawn), and
/// decodes it with a real decoder: `zbarimg` from Debian's zbar-tools.
public enum PrintedQR {
    /// The modules of a printed code: each text line is two module rows of half blocks.
    public static func modules(fromText text: String) -> [[Bool]] {
        var rows: [[Bool]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            var top: [Bool] = []
            var bottom: [Bool] = []
            for character in line {
                top.append(character == "█" || character == "▀")
                bottom.append(character == "█" || character == "▄")
            }
            rows.append(top)
            rows.append(bottom)
        }
        return rows
    }

    /// Decodes rows of modules (true = dark) with zbarimg, from a PGM scaled up four times.
    public static func decode(_ rows: [[Bool]], in directory: String) throws -> String {
        let scale = 4
        let width = (rows.first?.count ?? 0) * scale
        var image = Array("P5\n\(width) \(rows.count * scale)\n255\n".utf8)
        for row in rows {
            let line = row.flatMap { dark in [UInt8](repeating: dark ? 0 : 255, count: scale) }
            for _ in 0..<scale { image += line }
        }
        let path = directory + "/code.pgm"
        try Data(image).write(to: URL(fileURLWithPath: path))
        let result = try runTool(["zbarimg", "--quiet", "--raw", "-Sqrcode.enable", path])
        guard result.status == 0 else { throw TestFailure("zbarimg found no code: \(result.stderr)") }
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
