/// Bytes placed in a URL that a browser, a header or a page will read, and query values read back.
public enum URLText {
    /// Keeps RFC 3986's unreserved, reserved and `%` bytes; percent-encodes everything else (controls,
    /// space, `"`, `<`, `>`, `\`, `^`, backtick, `{`, `|`, `}`, non-ASCII).
    public static func safe(_ text: String) -> String { encode(text, keeping: isKept) }

    /// A query value: everything but RFC 3986's unreserved bytes percent-encoded.
    public static func queryValue(_ text: String) -> String { encode(text, keeping: isUnreserved) }

    static func encode(_ text: String, keeping kept: (UInt8) -> Bool) -> String {
        // Most values (a capture, a path) need nothing encoded: the same string comes back, uncopied.
        guard !text.utf8.allSatisfy(kept) else { return text }
        let digits: StaticString = "0123456789ABCDEF"
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if kept(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits.utf8Start[Int(byte >> 4)], digits.utf8Start[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A query item's name or value as a form sends it: `+` is a space, `%XX` a byte. Nil when a `%` is
    /// not followed by two hex digits or the bytes are not UTF-8: such a value is refused, never guessed.
    public static func formDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E
            || byte == 0x5F || byte == 0x7E
    }

    static func isKept(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
            UInt8(ascii: "%"):
            return true
        default: return false
        }
    }
}
