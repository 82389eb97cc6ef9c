import Foundation
import Gzip
import TestSupport
import Testing

@testable import QRCode

/// The QR code `dev` prints, read back by a real decoder (`zbarimg` from Debian's zbar-tools).
@Suite("QR codes, decoded by zbarimg")
struct QRCodeTests {
    @Test("short and long URLs, every version class (1, 7+ with version bits, 10+ with 16-bit counts), decode exactly")
    func decodes() throws {
        try withTemporaryDirectory { directory in
            let texts = [
                "http://192.168.1.20/ca.mobileconfig",
                "http://[fd00:1234:5678::20]:8080/ca.mobileconfig",
                "https://dev.example.com/" + String(repeating: "segment/", count: 18),
                // URLs are ASCII (a non-ASCII character is percent-encoded): decoders disagree on how to read
                // other bytes without an ECI header, so the codes dev prints never need one.
                "https://dev.example.com/?q=" + String(repeating: "%C3%A90Z", count: 50),
                String(repeating: "0123456789abcdef", count: 60),
            ]
            var versions: [Int] = []
            for text in texts {
                let code = try #require(QRCode(text))
                versions.append(code.version)
                #expect(code.size == code.version * 4 + 17)
                let printed = code.text(ansi: false)
                #expect(try PrintedQR.decode(PrintedQR.modules(fromText: printed), in: directory) == text, "version \(code.version)")
            }
            #expect(versions.first == 3)
            #expect(versions.contains { (7...9).contains($0) } && versions.contains { $0 >= 10 } && versions.max()! >= 20)
        }
    }

    @Test("in a terminal the code is black on white whatever the theme; beyond version 40 there is no code")
    func terminalAndLimits() throws {
        let code = try #require(QRCode("http://192.168.1.20/"))
        let ansi = code.text(ansi: true)
        #expect(ansi.hasPrefix("\u{1B}[30;47m") && ansi.contains("\u{1B}[0m\n"))
        #expect(QRCode(String(repeating: "x", count: 2331)) != nil)
        #expect(QRCode(String(repeating: "x", count: 2332)) == nil)
    }

    static let shortLinks = [
        "https://go.example.com/Ab3dEf7hIjK9mNoPq",
        "https://links.example-customer.com/" + String(repeating: "spring-sale-", count: 12),
    ]

    @Test("a short link's PNG: zbarimg reads it back, its CRCs hold, its pixels are the modules scaled with the quiet zone")
    func png() throws {
        try withTemporaryDirectory { directory in
            for text in Self.shortLinks {
                let code = try #require(QRCode(text))
                let png = try code.png(pixelsPerModule: 6) { bytes throws(ZlibError) in try Gzip.zlibStream(bytes) }
                let path = directory + "/code.png"
                try Data(png).write(to: URL(fileURLWithPath: path))
                // zbarimg reads through ImageMagick's PNG reader, which checks every chunk's CRC.
                let result = try runTool(["zbarimg", "--quiet", "--raw", "-Sqrcode.enable", path])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines) == text)

                let span = (code.size + 2 * QRCode.quietZone) * 6
                #expect(Array(png[16..<24]) == PNG.bigEndian(UInt32(span)) + PNG.bigEndian(UInt32(span)))
                // One IDAT: its zlib stream inflates to one filter byte and a bit per pixel for each row.
                let idatLength = Int(png[33]) << 24 | Int(png[34]) << 16 | Int(png[35]) << 8 | Int(png[36])
                #expect(String(decoding: png[37..<41], as: UTF8.self) == "IDAT")
                let scanlines = try Gzip.decompress(Array(png[41..<(41 + idatLength)]))
                let rowBytes = (span + 7) / 8
                #expect(scanlines.count == (rowBytes + 1) * span)
                func dark(_ x: Int, _ y: Int) -> Bool { scanlines[y * (rowBytes + 1) + 1 + x / 8] & (0x80 >> UInt8(x % 8)) == 0 }
                for y in 0..<code.size {
                    for x in 0..<code.size {
                        let (px, py) = ((x + QRCode.quietZone) * 6 + 3, (y + QRCode.quietZone) * 6 + 3)
                        #expect(dark(px, py) == code.modules[y][x])
                    }
                }
                #expect((0..<span).allSatisfy { !dark($0, 0) && !dark(0, $0) }, "the quiet zone is light")
            }
        }
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926, "CRC-32's check value")
    }

    @Test("a short link's SVG, drawn by a real browser (chromium), decodes with zbarimg; it holds geometry only")
    func svg() throws {
        try withTemporaryDirectory { directory in
            for text in Self.shortLinks {
                let code = try #require(QRCode(text))
                let svg = code.svg()
                #expect(!svg.contains("<script") && !svg.contains("href") && !svg.contains(text))
                try Data(svg.utf8).write(to: URL(fileURLWithPath: directory + "/code.svg"))
                let pixels = (code.size + 2 * QRCode.quietZone) * 8
                let drawn = try runTool(
                    [
                        "flock", "-w", "180", TestPaths.chromiumLock, "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--screenshot=" + directory + "/drawn.png", "--window-size=\(pixels),\(pixels)",
                        "file://" + directory + "/code.svg",
                    ],
                    timeout: 240
                )
                #expect(drawn.status == 0, "\(drawn.stderr)")
                let result = try runTool(["zbarimg", "--quiet", "--raw", "-Sqrcode.enable", directory + "/drawn.png"])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines) == text)
            }
        }
    }
}
