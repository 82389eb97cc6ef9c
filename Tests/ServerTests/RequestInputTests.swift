import Testing

@testable import Server

@Suite("A connection's unread request bytes: used where read, copied before the read buffer changes")
struct RequestInputTests {
    private func put(_ text: String, into buffer: UnsafeMutableRawBufferPointer) {
        Array(text.utf8).withUnsafeBytes { buffer.copyMemory(from: $0) }
    }

    @Test("In place until settled; a settled copy outlives the read buffer; consuming and removing keep the rest in order")
    func inPlaceThenSettled() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        put("abcdefgh", into: buffer)
        var input = RequestInput()
        input.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<8]), inPlace: true)
        #expect(input.inPlace?.baseAddress == UnsafePointer(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)))
        input.consume(3)
        #expect(input.withBytes { String(decoding: $0, as: UTF8.self) } == "defgh")
        input.settle()
        #expect(input.inPlace == nil)
        buffer.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "!"))
        #expect(input.withBytes { String(decoding: $0, as: UTF8.self) } == "defgh")

        // Bytes arriving after a copy are added to it, never used in place.
        put("ijk", into: buffer)
        input.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<3]), inPlace: true)
        #expect(input.inPlace == nil && input.count == 8)
        input.remove(1..<3)
        #expect(input.withBytes { String(decoding: $0, as: UTF8.self) } == "dghijk")
        input.consume(2)
        #expect(input.withBytes { String(decoding: $0, as: UTF8.self) } == "hijk")
        input.consume(4)
        #expect(input.isEmpty && input.count == 0)

        // Removing from the middle of borrowed bytes copies them first; not in place means copied at once.
        put("0123456789", into: buffer)
        input.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<10]), inPlace: true)
        input.remove(2..<8)
        #expect(input.inPlace == nil && input.withBytes { String(decoding: $0, as: UTF8.self) } == "0189")
        input.removeAll()
        input.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<4]), inPlace: false)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        #expect(input.withBytes { String(decoding: $0, as: UTF8.self) } == "0123")
    }
}
