import Testing

@testable import AASA

/// A served document's bytes: one allocation that holds them at a fixed address for as long as any copy of
/// the value lives, with the hash behind the ETag taken once.
@Suite("Immutable bytes")
struct ImmutableBytesTests {
    @Test("A copy holds the same bytes and the same hash whichever way it was made; equal bytes are not the same copy")
    func copies() {
        let text = Array(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/p/*"}]}]}}"#.utf8)
        let fromArray = ImmutableBytes.copy(text)
        let fromPointer = text.withUnsafeBytes { ImmutableBytes.copy($0) }
        #expect(fromArray.array == text)
        #expect(fromArray.count == text.count)
        #expect(fromArray.hash == fromPointer.hash)
        #expect(fromArray.hash == text.withUnsafeBytes { FNV1a.wordHash($0) })
        #expect(fromArray.equals(text) && fromPointer.equals(text))
        #expect(!fromArray.isSame(as: fromPointer), "two copies are two allocations")
        let kept = fromArray
        #expect(kept.isSame(as: fromArray) && kept.buffer.baseAddress == fromArray.buffer.baseAddress)
        let other = ImmutableBytes.copy(Array(text.dropLast()))
        #expect(other.hash != fromArray.hash && !other.equals(text))
        #expect(ImmutableBytes.empty.count == 0 && ImmutableBytes.empty.array.isEmpty)
    }

    @Test("The bytes stay where they are while only the owner is held (a prepared response keeps the owner and a pointer)")
    func ownerKeepsTheBytes() {
        var pointer: UnsafeRawBufferPointer?
        var owner: AnyObject?
        do {
            // Made in a scope of its own: once it ends, only `owner` holds the allocation.
            let bytes = ImmutableBytes.copy((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            pointer = bytes.buffer
            owner = bytes.owner
        }
        // Other allocations of the same size would land on freed memory and change the bytes.
        let others = (0..<64).map { _ in ImmutableBytes.copy([UInt8](repeating: 0xFF, count: 4096)) }
        #expect(others.count == 64)
        #expect(owner != nil)
        #expect(Array(pointer!) == (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        withExtendedLifetime(owner) {}
    }
}
