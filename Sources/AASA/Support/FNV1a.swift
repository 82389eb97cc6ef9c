/// FNV-1a, 64-bit: the content hash behind strong ETags and "did these bytes change" checks (not a
/// security boundary: every input it sees is public or the server's own).
public enum FNV1a {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01B3

    public static func hash(_ bytes: some Sequence<UInt8>, startingWith seed: UInt64 = offsetBasis) -> UInt64 {
        var hash = seed
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* prime }
        return hash
    }

    /// 16 lower-case hex digits.
    public static func hex(_ value: UInt64) -> String { AASA.hex(value, width: 16).lowercased() }
}
