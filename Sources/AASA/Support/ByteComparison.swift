/// Equality of byte strings eight bytes at a time: the request path compares User-Agents and request
/// targets of a hundred bytes or more with remembered ones, where a byte loop costs four instructions a byte
/// (and a word loop with a byte loop for its tail about two: 250 instructions a link request).
public enum ByteComparison {
    @inline(__always)
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count > 0, let first = a.baseAddress, let second = b.baseAddress else { return true }
        @inline(__always) func differ(_ offset: Int) -> UInt64 {
            first.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ second.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        guard count >= 8 else {
            for offset in 0..<count
            where first.load(fromByteOffset: offset, as: UInt8.self) != second.load(fromByteOffset: offset, as: UInt8.self) {
                return false
            }
            return true
        }
        // Four words per step with one branch, then single words; the last word is read ending at the
        // last byte (overlapping the one before) instead of a byte loop for the rest.
        var offset = 0
        while offset + 32 <= count {
            if differ(offset) | differ(offset + 8) | differ(offset + 16) | differ(offset + 24) != 0 { return false }
            offset += 32
        }
        while offset + 8 <= count {
            if differ(offset) != 0 { return false }
            offset += 8
        }
        return offset == count || differ(count - 8) == 0
    }

    @inline(__always)
    public static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.withUnsafeBytes { equal($0, UnsafeRawBufferPointer(b)) }
    }
}
