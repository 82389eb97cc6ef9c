import Synchronization

/// Bytes written once and never changed, at an address that stays put for as long as a copy of this value
/// lives: a site's served document, held once by the loaded config and handed to the server's prepared
/// responses by pointer instead of being copied into each.
///
/// The bytes live in their object's own allocation (one allocation a document, not two: at a million
/// hosts the second one's header and malloc's overhead were 16 bytes a site, and half a million `malloc`
/// calls at every start). Sendable because nothing writes the bytes after `copy`.
public struct ImmutableBytes: @unchecked Sendable {
    /// What keeps ``buffer`` valid: hand it to whoever holds the pointer.
    public let owner: Storage

    public final class Storage: ManagedBuffer<Header, UInt8> {}

    public struct Header {
        let count: Int
        /// The content hash behind the served document's strong ETag and "did it change" checks, taken once
        /// while the bytes are in the cache (eight bytes per step: at a million hosts a byte-wise hash was a
        /// fifth of preparing the responses).
        let hash: UInt64
    }

    /// A copy of `bytes`.
    public static func copy(_ bytes: [UInt8]) -> ImmutableBytes {
        bytes.withUnsafeBytes { copy($0) }
    }

    /// A copy of bytes someone else owns (a snapshot mapped from a file).
    public static func copy(_ bytes: UnsafeRawBufferPointer) -> ImmutableBytes {
        let made = Storage.create(minimumCapacity: bytes.count) { storage in
            storage.withUnsafeMutablePointerToElements { elements in
                if let base = bytes.baseAddress { elements.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
                return Header(count: bytes.count, hash: FNV1a.wordHash(UnsafeRawBufferPointer(start: elements, count: bytes.count)))
            }
        }
        return ImmutableBytes(owner: unsafeDowncast(made, to: Storage.self))
    }

    /// The bytes, valid for as long as ``owner`` lives.
    public var buffer: UnsafeRawBufferPointer {
        owner.withUnsafeMutablePointerToElements { UnsafeRawBufferPointer(start: $0, count: owner.header.count) }
    }

    public var hash: UInt64 { owner.header.hash }

    public var count: Int { owner.header.count }

    /// A copy, for code that wants an array (the command line, tests).
    public var array: [UInt8] { Array(buffer) }

    public func equals(_ bytes: [UInt8]) -> Bool { buffer.elementsEqual(bytes) }

    /// The same bytes at the same address (one copy, shared), not merely equal bytes.
    public func isSame(as other: ImmutableBytes) -> Bool { owner === other.owner }

    public static let empty = ImmutableBytes.copy([UInt8]())
}
