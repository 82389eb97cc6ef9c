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

/// Identical documents of one load, kept once: many tenants of a link service serve the same file on
/// their own hosts. Sites built in parallel ask concurrently, so the table is behind a lock; it lives for
/// one load (sites taken over from an earlier load keep the copy they have).
final class DocumentPool: @unchecked Sendable {
    /// One document per hash: a second document with the same hash but other bytes (a collision) is simply
    /// not shared. In shards, each with its own lock, so the loading threads seldom wait for each other.
    ///
    /// The shards are reached through a plain pointer: an array of shard objects was retained and released
    /// at every call by every loading thread, counters that each core took from the other. Unchecked
    /// Sendable: each table is only touched under its lock.
    private static let shardCount = 64
    private let shards: UnsafeMutablePointer<Mutex<[UInt64: ImmutableBytes]>>

    init() {
        shards = .allocate(capacity: Self.shardCount)
        for index in 0..<Self.shardCount { (shards + index).initialize(to: Mutex([:])) }
    }

    deinit {
        shards.deinitialize(count: Self.shardCount)
        shards.deallocate()
    }

    /// Lets go of every document (the sites that serve one hold it), the shards in parallel: left to the
    /// pool's release, one thread took each of a million documents from memory once more at the end of a
    /// load while the other cores waited. Documents interned later are shared as before.
    func empty(parallel: ParallelFor?) {
        let body: @Sendable (Int) -> Void = { index in self.shards[index].withLock { $0 = [:] } }
        if let parallel { parallel(Self.shardCount, body) } else { for index in 0..<Self.shardCount { body(index) } }
    }

    /// The first document of this load with the same bytes as `bytes`, or `bytes` itself.
    func intern(_ bytes: ImmutableBytes) -> ImmutableBytes {
        let hash = bytes.hash
        let first = shards[Int(hash >> 58)].withLock { table in
            if let first = table[hash] { return first }
            table[hash] = bytes
            return bytes
        }
        return first.isSame(as: bytes) || first.buffer.elementsEqual(bytes.buffer) ? first : bytes
    }
}
