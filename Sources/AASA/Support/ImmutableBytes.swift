import Synchronization

/// Bytes written once and never changed, at an address that stays put for the object's life: a site's
/// served document, held once by the loaded config and handed to the server's prepared responses by
/// pointer instead of being copied into each.
public final class ImmutableBytes: @unchecked Sendable {
    public let buffer: UnsafeRawBufferPointer
    /// The content hash behind the served document's strong ETag and "did it change" checks, taken once
    /// while the bytes are in the cache (eight bytes per step: at a million hosts a byte-wise hash was a
    /// fifth of preparing the responses).
    public let hash: UInt64

    public init(_ bytes: [UInt8]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        storage.copyBytes(from: bytes)
        buffer = UnsafeRawBufferPointer(storage)
        hash = FNV1a.wordHash(buffer)
    }

    /// A copy of bytes someone else owns (a snapshot mapped from a file).
    public init(copying bytes: UnsafeRawBufferPointer) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        storage.copyMemory(from: bytes)
        buffer = UnsafeRawBufferPointer(storage)
        hash = FNV1a.wordHash(buffer)
    }

    deinit { buffer.deallocate() }

    public var count: Int { buffer.count }

    /// A copy, for code that wants an array (the command line, tests).
    public var array: [UInt8] { Array(buffer) }

    public func equals(_ bytes: [UInt8]) -> Bool { buffer.elementsEqual(bytes) }

    public static let empty = ImmutableBytes([])
}

/// Identical documents of one load, kept once: many tenants of a link service serve the same file on
/// their own hosts. Sites built in parallel ask concurrently, so the table is behind a lock; it lives for
/// one load (sites taken over from an earlier load keep the copy they have).
final class DocumentPool: Sendable {
    /// One document per hash: a second document with the same hash but other bytes (a collision) is simply
    /// not shared. In shards, each with its own lock, so the loading threads seldom wait for each other.
    private let shards = (0..<64).map { _ in Shard() }

    private final class Shard: Sendable {
        let table = Mutex<[UInt64: ImmutableBytes]>([:])
    }

    /// The first document of this load with the same bytes as `bytes`, or `bytes` itself.
    func intern(_ bytes: ImmutableBytes) -> ImmutableBytes {
        let hash = bytes.hash
        let first = shards[Int(hash >> 58)].table.withLock { table in
            if let first = table[hash] { return first }
            table[hash] = bytes
            return bytes
        }
        return first === bytes || first.buffer.elementsEqual(bytes.buffer) ? first : bytes
    }
}
