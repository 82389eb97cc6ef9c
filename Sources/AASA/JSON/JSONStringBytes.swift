/// Eight bytes of a JSON string at a time: which must be escaped (a control byte, a quote, a backslash).
/// The JSON writer asks whether a string needs escaping; the direct decoders, where a plain string ends.
enum JSONStringBytes {
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that must be escaped: a control byte (the "has less than" test)
    /// or a quote or backslash (the "has zero" test after XOR). The lowest flagged byte is exact — a borrow
    /// runs upward from a flagged byte and may flag bytes above it — so "any" and "the first" are both
    /// read right.
    @inline(__always)
    static func mustEscape(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let control = (word &- 0x2020_2020_2020_2020) & ~word
        let quote = word ^ 0x2222_2222_2222_2222
        let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highBits
    }
}
