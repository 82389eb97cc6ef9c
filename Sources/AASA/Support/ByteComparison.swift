/// Equality of byte strings eight bytes at a time: the request path compares User-Agents and request
/// targets of a hundred bytes or more with remembered ones, where a byte loop costs four instructions a byte.
public enum ByteComparison {
    @inline(__always)
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count > 0, let first = a.baseAddress, let second = b.baseAddress else { return true }
        var offset = 0
        while offset + 8 <= count {
            if first.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != second.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            {
                return false
            }
            offset += 8
        }
        while offset < count {
            if first.load(fromByteOffset: offset, as: UInt8.self) != second.load(fromByteOffset: offset, as: UInt8.self) { return false }
            offset += 1
        }
        return true
    }

    @inline(__always)
    public static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.withUnsafeBytes { equal($0, UnsafeRawBufferPointer(b)) }
    }
}
