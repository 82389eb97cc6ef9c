import Synchronization

/// Identical documents of one load, kept once: many tenants of a link service serve the same file on
/// their own hosts. Sites built in parallel ask concurrently; the pool lives for one load (sites taken over
/// from an earlier load keep the copy they have).
///
/// A fixed table, not a dictionary of every document: each hash has one slot, and the first document of the
/// load to reach a slot keeps it. The same file served by a thousand tenants shares one copy; a load of a
/// million documents that are all different adds nothing to a table that grew, rehashed and missed the
/// cache for each of them (a dictionary of every document was 7 % of the CPU of a million hosts' first
/// start). Two different documents whose hashes share a slot are each correct, the later one unshared.
final class DocumentPool: @unchecked Sendable {
    /// Shards, each behind its own lock and on its own cache line, so the loading threads seldom wait for
    /// each other or take a line from each other; the slots are reached through plain pointers (an array of
    /// shard objects was retained and released at every call by every loading thread). Unchecked Sendable:
    /// each shard's slots are only touched under its lock.
    private static let shardCount = 64
    private static let slotsPerShard = 1024

    private struct Slot {
        var hash: UInt64
        var document: ImmutableBytes?
    }

    /// One lock a cache line: two threads at neighbouring shards would otherwise share a line.
    private struct Shard: ~Copyable {
        let lock = Mutex(())
        let padding: (Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0)
    }

    private let shards: UnsafeMutablePointer<Shard>
    /// Each shard's slots, made when the shard is first asked: a config of a few sites touches a few of
    /// them, and writing all 65,536 slots up front was a megabyte of pages faulted in at every start.
    private let slots: UnsafeMutablePointer<UnsafeMutablePointer<Slot>?>

    init() {
        shards = .allocate(capacity: Self.shardCount)
        for index in 0..<Self.shardCount { (shards + index).initialize(to: Shard()) }
        slots = .allocate(capacity: Self.shardCount)
        slots.initialize(repeating: nil, count: Self.shardCount)
    }

    deinit {
        for shard in 0..<Self.shardCount {
            guard let block = slots[shard] else { continue }
            block.deinitialize(count: Self.slotsPerShard)
            block.deallocate()
        }
        slots.deallocate()
        shards.deinitialize(count: Self.shardCount)
        shards.deallocate()
    }

    /// The shard's slots, made on first use; call under the shard's lock.
    private func block(_ shard: Int) -> UnsafeMutablePointer<Slot> {
        if let block = slots[shard] { return block }
        let block = UnsafeMutablePointer<Slot>.allocate(capacity: Self.slotsPerShard)
        block.initialize(repeating: Slot(hash: 0, document: nil), count: Self.slotsPerShard)
        slots[shard] = block
        return block
    }

    /// Lets go of every document (the sites that serve one hold it), the shards in parallel: left to the
    /// pool's release, one thread took each document from memory once more at the end of a load while the
    /// other cores waited. Documents interned later are shared as before.
    func empty(parallel: ParallelFor?) {
        let body: @Sendable (Int) -> Void = { shard in
            self.shards[shard].lock.withLock { _ in
                guard let block = self.slots[shard] else { return }
                for index in 0..<Self.slotsPerShard { block[index] = Slot(hash: 0, document: nil) }
            }
        }
        if let parallel { parallel(Self.shardCount, body) } else { for shard in 0..<Self.shardCount { body(shard) } }
    }

    /// The document of this load with the same bytes as `bytes` that holds their slot, or `bytes` itself.
    func intern(_ bytes: ImmutableBytes) -> ImmutableBytes {
        let hash = bytes.hash
        let shard = Int(truncatingIfNeeded: hash >> 58)
        let kept = shards[shard].lock.withLock { _ -> ImmutableBytes? in
            let slot = block(shard) + Int(truncatingIfNeeded: hash) & (Self.slotsPerShard - 1)
            guard let document = slot.pointee.document else {
                slot.pointee = Slot(hash: hash, document: bytes)
                return nil
            }
            return slot.pointee.hash == hash ? document : nil
        }
        guard let kept, kept.isSame(as: bytes) || kept.buffer.elementsEqual(bytes.buffer) else { return bytes }
        return kept
    }
}
