/// Base64 with the URL- and file-safe alphabet and no padding (RFC 4648 §5), as JOSE and ACME use it.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String { encode(bytes, alphabet: alphabet, padded: false) }

    static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], padded: Bool) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(group >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            if rest == 2 { output.append(alphabet[Int(group >> 6 & 63)]) }
            if padded { output += [UInt8](repeating: UInt8(ascii: "="), count: 3 - rest) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// Nil for a character outside the alphabet or an impossible length; `=` padding is tolerated.
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt32] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt32(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var group: UInt32 = 0
            for (offset, value) in chunk.enumerated() { group |= value << UInt32(18 - 6 * offset) }
            let produced = chunk.count - 1
            for byteIndex in 0..<produced { output.append(UInt8(group >> UInt32(16 - 8 * byteIndex) & 0xFF)) }
            index += 4
        }
        return output
    }
}

/// Base64 with the standard alphabet and `=` padding (RFC 4648 §4): what a Content-Security-Policy hash
/// source is written in.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String { Base64URL.encode(bytes, alphabet: alphabet, padded: true) }
}
