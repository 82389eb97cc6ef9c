import Testing

@testable import AASA

@Suite("Which strings the JSON writers must escape, eight bytes at a time")
struct JSONEscapeTests {
    static func needsEscapeByteByByte(_ bytes: [UInt8]) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    @Test(
        "Same verdict as a byte loop: every length to 40, each special byte at every position, bytes beyond ASCII and next to the specials"
    )
    func sameVerdictAsByteLoop() {
        var generator = SystemRandomNumberGenerator()
        // Bytes that need no escape, including the neighbours of the special ones and bytes past 0x7F.
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF] + Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
        let special: [UInt8] = [0x00, 0x01, 0x0A, 0x1F, UInt8(ascii: "\""), UInt8(ascii: "\\")]
        for length in 0...40 {
            let bytes = (0..<length).map { _ in plain.randomElement(using: &generator)! }
            #expect(!bytes.withUnsafeBufferPointer { JSONWriter.needsEscape($0) }, "length \(length), nothing to escape")
            for position in 0..<length {
                for byte in special {
                    var changed = bytes
                    changed[position] = byte
                    let verdict = changed.withUnsafeBufferPointer { JSONWriter.needsEscape($0) }
                    #expect(verdict == Self.needsEscapeByteByByte(changed), "length \(length), \(byte) at \(position)")
                    #expect(verdict)
                }
            }
        }
    }

    @Test(
        "Both writers escape each of the 128 ASCII bytes and bytes beyond it alike, in keys and values, and the text parses back to the same strings"
    )
    func writersAgree() throws {
        var texts = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        texts += [
            "", "plain", "a\"b", "tab\tand\nnewline", "\u{01}\u{1F}é\u{7F}", "ünïcödé \\ \"quoted\"",
            String(repeating: "\u{02}x", count: 300),
        ]
        for text in texts {
            var compact = CompactJSONWriter(capacity: 16)
            compact.openObject()
            compact.key(text: text)
            compact.string(text)
            compact.closeObject()
            let tree = JSONWriter.bytes(.object([(text, .string(text))]))
            #expect(compact.bytes == tree, "\(Array(text.utf8))")
            let parsed = try #require(JSONParser.parse(String(decoding: compact.bytes, as: UTF8.self)).root)
            #expect(JSONOutput(parsed) == .object([(text, .string(text))]), "\(Array(text.utf8))")
        }
        let control = JSONWriter.bytes(.string("\u{00}\u{0B}\u{1F}"))
        #expect(String(decoding: control, as: UTF8.self) == #""\u0000\u000B\u001F""#)
    }
}
