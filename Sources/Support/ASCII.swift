/// Byte classes and hex digits, for parsers that read ASCII bytes (HTTP framing, URLs, fingerprints,
/// `/proc` files): written once here, inlined where they are used.
public enum ASCII {
    /// The value of a hex digit (`0-9`, `a-f`, `A-F`), or nil.
    @inlinable
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }

    @inlinable
    public static func isHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    @inlinable
    public static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    @inlinable
    public static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Space, tab, CR or LF.
    @inlinable
    public static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// `value` in upper-case hex, zero-padded to `width` digits.
    public static func hex(_ value: some BinaryInteger, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Bytes as hex digits, two per byte (upper case, as ``hex(_:width:)``).
    public static func hex(bytes: some Sequence<UInt8>) -> String {
        bytes.map { hex($0, width: 2) }.joined()
    }

    /// The bytes `text` spells in hex digits, two per byte (either case); nil for an odd count or another
    /// character.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
