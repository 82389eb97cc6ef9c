import Foundation
import TestSupport
import Testing

@testable import CLI

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
}
