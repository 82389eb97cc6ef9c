/// A hash of a header value, computed by the parser in the pass that already reads the value's bytes
/// eight at a time for forbidden ones: the link path remembers visitor classes by User-Agent, and hashing
/// a browser's hundred-byte User-Agent again cost as much as that whole scan. Finds candidates the caller
/// then compares byte for byte; not a security boundary (the values are the client's own).
public enum FieldValueHash {
    static let initial: UInt64 = 0x243F_6A88_85A3_08D3

    @inline(__always)
    static func mix(_ state: UInt64, _ word: UInt64) -> UInt64 {
        let mixed = (state ^ word) &* 0x9E37_79B9_7F4A_7C15
        return mixed ^ mixed >> 29
    }

    /// The last 1 to 7 bytes as a word, the bytes after them zero: `word` holds them in its low bytes.
    @inline(__always)
    static func partial(_ word: UInt64, count: Int) -> UInt64 { word & ((1 << UInt64(count &* 8)) &- 1) }

    /// Fewer than eight bytes as the low bytes of a word, the rest zero: what ``partial(_:count:)`` gives
    /// for a word already loaded, read byte by byte where a whole word would run past the buffer.
    @inline(__always)
    static func tail(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var word: UInt64 = 0
        for index in bytes.indices { word |= UInt64(bytes[index]) << UInt64(index * 8) }
        return word
    }

    @inline(__always)
    static func finish(_ state: UInt64, count: Int) -> UInt64 { mix(state, UInt64(truncatingIfNeeded: count)) }

    /// The same hash the parser gives, for bytes it did not hash (a value with a tab or trailing
    /// whitespace inside its line, or one from elsewhere).
    public static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = initial
        var offset = 0
        while offset + 8 <= bytes.count {
            state = mix(state, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count { state = mix(state, tail(UnsafeRawBufferPointer(rebasing: bytes[offset...]))) }
        return finish(state, count: bytes.count)
    }
}
