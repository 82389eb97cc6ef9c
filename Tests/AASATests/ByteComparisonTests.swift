import AASA
import Testing

/// Byte strings compared eight bytes at a time: the same verdict as comparing them byte by byte, at every
/// length around the word size and with a difference at every position.
@Suite("Byte comparison eight bytes at a time")
struct ByteComparisonTests {
    @Test("Equal exactly when the arrays are equal: every length to 140, one byte changed at every position, lengths apart")
    func sameVerdictAsArrays() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...140 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes.withUnsafeBufferPointer { #expect(ByteComparison.equal(bytes, $0), "length \(length) equal to itself") }
            for position in 0..<length {
                var changed = bytes
                changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                changed.withUnsafeBufferPointer { #expect(!ByteComparison.equal(bytes, $0), "length \(length), byte \(position) changed") }
            }
            let longer = bytes + [0]
            longer.withUnsafeBufferPointer { #expect(!ByteComparison.equal(bytes, $0), "length \(length) against one more byte") }
            if length > 0 {
                let shorter = Array(bytes.dropLast())
                shorter.withUnsafeBufferPointer { #expect(!ByteComparison.equal(bytes, $0), "length \(length) against its prefix") }
            }
        }
    }
}
