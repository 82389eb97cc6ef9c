import Support

/// FNV-1a, 64-bit, and a word-at-a-time variant (``wordHash(_:seed:)``, behind the served documents'
/// strong ETags): content hashes for "did these bytes change" checks (not a security boundary: every
/// input they see is public or the server's own).
public enum FNV1a {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01B3

    public static func hash(_ bytes: some Sequence<UInt8>, startingWith seed: UInt64 = offsetBasis) -> UInt64 {
        var hash = seed
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* prime }
        return hash
    }

    /// Eight bytes per step (multiply and shift per word, FNV for the tail): for hashes that only find
    /// candidates the caller then compares, over large or many buffers (a 1.6 MB config in a fraction of a
    /// millisecond). `seed` gives an independent second hash.
    public static func wordHash(_ buffer: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var hash: UInt64 = (offsetBasis ^ seed) ^ UInt64(buffer.count)
        var offset = 0
        while offset + 8 <= buffer.count {
            hash = (hash ^ buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            hash ^= hash >> 29
            offset += 8
        }
        while offset < buffer.count {
            hash = (hash ^ UInt64(buffer[offset])) &* prime
            offset += 1
        }
        return hash
    }

    /// 16 lower-case hex digits.
    public static func hex(_ value: UInt64) -> String { ASCII.hex(value, width: 16).lowercased() }
}
