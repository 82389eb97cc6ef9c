import Testing

@testable import AASA

@Suite("The direct decoders' JSON reader")
struct DirectJSONReaderTests {
    /// What a string's scan must give, a byte at a time: its end (the closing quote's offset), or nil when
    /// a byte before the quote is a backslash, a control character or not ASCII.
    static func reference(_ bytes: [UInt8]) -> Int? {
        for offset in 1..<bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") { return offset }
            if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\\") { return nil }
        }
        return nil
    }

    static func scanned(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = DirectJSONReader(buffer, at: SourceLocation(offset: 0, line: 1, column: 1), lineStart: 0)
            do throws(DirectJSONReader.Declined) {
                let (start, end) = try reader.stringBounds()
                return start == 1 && reader.index == end + 1 ? end : -1
            } catch {
                return nil
            }
        }
    }

    @Test("A string's end is found eight bytes at a time exactly as a byte at a time: every byte value at every place of a word")
    func everyByteEverywhere() {
        for length in 0..<26 {
            for position in 0..<max(length, 1) {
                for value in 0...255 {
                    var bytes = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "a"), count: length) + [UInt8(ascii: "\"")]
                    if length > 0 { bytes[1 + position] = UInt8(value) }
                    // Once without and once with the rest of a document after the string.
                    for tail in [[], Array(#", "next": "x"}"#.utf8)] {
                        let text = bytes + tail
                        guard Self.scanned(text) == Self.reference(text) else {
                            Issue.record(
                                "length \(length), byte \(value) at \(position), tail \(tail.count): \(String(describing: Self.scanned(text))) vs \(String(describing: Self.reference(text)))"
                            )
                            return
                        }
                    }
                }
            }
        }
    }

    @Test("Random strings with a few bytes of every kind: the same end as a byte at a time")
    func randomStrings() {
        var generator = SplitMix(seed: 0xD1EC7)
        let kinds: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x20, 0x7F, 0x80, 0xFF, 0x61, 0x2F, 0x2A]
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 40)
            var bytes = [UInt8(ascii: "\"")]
            for _ in 0..<length {
                bytes.append(generator.next() % 5 == 0 ? kinds[Int(generator.next() % UInt64(kinds.count))] : UInt8(ascii: "a"))
            }
            if generator.next() % 2 == 0 { bytes.append(UInt8(ascii: "\"")) }
            #expect(Self.scanned(bytes) == Self.reference(bytes), "\(bytes)")
        }
    }
}
