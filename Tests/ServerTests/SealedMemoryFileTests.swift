import Posix
import Testing

@Suite("A sealed memory file holding a document's bytes")
struct SealedMemoryFileTests {
    @Test("Holds exactly the bytes, mapped; sealed against writing, growing, shrinking and further seals; a write is refused")
    func sealed() throws {
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let file = try #require(bytes.withUnsafeBytes { SealedMemoryFile.make($0, name: "test", limit: (count: 1 << 20, bytes: 1 << 40)) })
        #expect(Array(file.buffer) == bytes)
        let seals = file.seals
        #expect(seals.write && seals.grow && seals.shrink && seals.sealed)
        #expect(file.refusesWrites)
        #expect(Array(file.buffer) == bytes, "the refused write changed nothing")
        #expect(file.descriptor >= 0)
    }

    @Test("None is made for empty bytes or past the count or byte limit: the caller keeps sending from memory")
    func limits() {
        let bytes: [UInt8] = Array("0123456789".utf8)
        bytes.withUnsafeBytes { raw in
            #expect(
                SealedMemoryFile.make(UnsafeRawBufferPointer(rebasing: raw[0..<0]), name: "test", limit: (count: 100, bytes: 1 << 40))
                    == nil
            )
            #expect(SealedMemoryFile.make(raw, name: "test", limit: (count: 0, bytes: 1 << 40)) == nil)
            #expect(SealedMemoryFile.make(raw, name: "test", limit: (count: 1 << 20, bytes: 9)) == nil)
            // Refusals are not counted: a file fits again once the limits allow it.
            let made = SealedMemoryFile.make(raw, name: "test", limit: (count: 1 << 20, bytes: 1 << 40))
            #expect(made.map { Array($0.buffer) } == bytes)
        }
    }
}
