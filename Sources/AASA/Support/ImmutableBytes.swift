/// Bytes written once and never changed, at an address that stays put for the object's life: a site's
/// served document, held once by the loaded config and handed to the server's prepared responses by
/// pointer instead of being copied into each.
public final class ImmutableBytes: @unchecked Sendable {
    public let buffer: UnsafeRawBufferPointer

    public init(_ bytes: [UInt8]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        storage.copyBytes(from: bytes)
        buffer = UnsafeRawBufferPointer(storage)
    }

    deinit { buffer.deallocate() }

    public var count: Int { buffer.count }

    /// A copy, for code that wants an array (the command line, tests).
    public var array: [UInt8] { Array(buffer) }

    public func equals(_ bytes: [UInt8]) -> Bool { buffer.elementsEqual(bytes) }

    public static let empty = ImmutableBytes([])
}
