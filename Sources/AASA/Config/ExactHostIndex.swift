/// Exact host names → values, for a million names: open addressing over 4-byte slots, each holding an
/// 8-bit tag of the name's hash and the entry's index, so a probe compares names only when the tags
/// agree (a `[String: Value]` compared the strings of every bucket it passed). Under 70 % full, a probe
/// passes one or two other slots, and a tag lets one of 256 of them through to a comparison.
///
/// The table is split into shards by the hash's top bits. Shards are independent, so the loader builds
/// them on several threads at once (``HostTableBuilder``); a lookup picks its shard with one shift.
/// Names come from the config, never from requests, so request traffic cannot lengthen a probe.
struct ExactHostIndex<Value: Sendable>: Sendable {
    struct Shard: Sendable {
        /// 0: empty; otherwise `tag << 24 | (entry + 1)`.
        private var slots: [UInt32]
        /// Each name where its site keeps it (the site's hosts, and which of them): no string of the
        /// table's own. Two arrays, not one of ``HostName``: its padding was 4 bytes a host.
        private var owners: [SiteHosts] = []
        private var ordinals: [UInt32] = []
        private var values: [Value] = []

        /// Entries a shard can number in a slot's 24 bits (a config's table has 64 shards past 65,536 hosts).
        static var capacity: Int { (1 << 24) - 2 }

        init(expectedCount: Int) {
            slots = Array(repeating: 0, count: Shard.slotCount(for: expectedCount))
            owners.reserveCapacity(expectedCount)
            ordinals.reserveCapacity(expectedCount)
            values.reserveCapacity(expectedCount)
        }

        var count: Int { owners.count }

        @inline(__always)
        private func name(_ entry: Int) -> UnsafeRawBufferPointer {
            owners[entry].nameBytes(Int(ordinals[entry]))
        }

        private static func word(tag: UInt32, entry: Int) -> UInt32 { tag << 24 | UInt32(entry + 1) }

        /// Room for `count` entries at most 70 % full, a power of two.
        private static func slotCount(for count: Int) -> Int {
            var slots = 8
            while slots * 7 < count * 10 { slots *= 2 }
            return slots
        }

        /// The slot and entry holding `name`, if it is here.
        private func find(_ name: UnsafeRawBufferPointer, hash: UInt64) -> (slot: Int, entry: Int)? {
            let mask = slots.count - 1
            let tag = ExactHostIndex.tag(hash)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let word = slots[slot]
                if word == 0 { return nil }
                if word >> 24 == tag {
                    let entry = Self.entry(word)
                    if ByteComparison.equal(self.name(entry), name) { return (slot, entry) }
                }
                slot = (slot + 1) & mask
            }
        }

        private static func entry(_ word: UInt32) -> Int { Int(word & 0xFF_FFFF) - 1 }

        func lookup(_ name: UnsafeRawBufferPointer, hash: UInt64) -> Value? {
            find(name, hash: hash).map { values[$0.entry] }
        }

        /// Adds `name` unless it is there already; then returns what it maps to (the first value stays).
        mutating func insertIfAbsent(_ name: HostName, hash: UInt64, _ value: Value) -> Value? {
            if let existing = lookup(name.bytes, hash: hash) { return existing }
            precondition(owners.count < Self.capacity, "a host table shard holds at most \(Self.capacity) names")
            if (owners.count + 1) * 10 > slots.count * 7 { grow() }
            owners.append(SiteHosts(storage: name.storage))
            ordinals.append(UInt32(name.index))
            values.append(value)
            place(hash: hash, entry: owners.count - 1)
            return nil
        }

        /// Replaces the value of `name`, or adds it.
        mutating func set(_ name: HostName, hash: UInt64, _ value: Value) {
            if let found = find(name.bytes, hash: hash) {
                values[found.entry] = value
            } else {
                _ = insertIfAbsent(name, hash: hash, value)
            }
        }

        /// Removes `name` when its value satisfies `isExpected`; true when it did.
        mutating func remove(_ name: UnsafeRawBufferPointer, hash: UInt64, ifValue isExpected: (Value) -> Bool) -> Bool {
            guard let (slot, entry) = find(name, hash: hash) else { return false }
            let mask = slots.count - 1
            guard isExpected(values[entry]) else { return false }
            // Close the gap so every later name of the probe run stays reachable (backward shift).
            var hole = slot
            var next = (hole + 1) & mask
            while slots[next] != 0 {
                let entryThere = Self.entry(slots[next])
                let home = Int(truncatingIfNeeded: ExactHostIndex.hash(self.name(entryThere))) & mask
                // It may move back to the hole unless its home lies after the hole, up to where it is.
                let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
                if movable {
                    slots[hole] = slots[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            slots[hole] = 0
            // Keep the entries dense: the last one moves into the removed one's place.
            let last = owners.count - 1
            if entry != last {
                let lastHash = ExactHostIndex.hash(self.name(last))
                var probe = Int(truncatingIfNeeded: lastHash) & mask
                while Self.entry(slots[probe]) != last { probe = (probe + 1) & mask }
                slots[probe] = Self.word(tag: ExactHostIndex.tag(lastHash), entry: entry)
                owners[entry] = owners[last]
                ordinals[entry] = ordinals[last]
                values[entry] = values[last]
            }
            owners.removeLast()
            ordinals.removeLast()
            values.removeLast()
            return true
        }

        private mutating func place(hash: UInt64, entry: Int) {
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Self.word(tag: ExactHostIndex.tag(hash), entry: entry)
        }

        private mutating func grow() {
            slots = Array(repeating: 0, count: slots.count * 2)
            for entry in owners.indices { place(hash: ExactHostIndex.hash(name(entry)), entry: entry) }
        }
    }

    private(set) var shards: [Shard]
    /// log2 of the shard count.
    let shardBits: Int

    /// Sized for `expectedCount` names; past 65,536 the table is in 64 shards (so it can be built in parallel).
    init(expectedCount: Int = 0) {
        shardBits = Self.shardBits(forExpectedCount: expectedCount)
        let shardCount = 1 << shardBits
        shards = (0..<shardCount).map { _ in Shard(expectedCount: expectedCount / shardCount) }
    }

    /// Shards built elsewhere (``HostTableBuilder``), each holding exactly the names whose ``shard(of:)`` it is.
    init(shards: [Shard], shardBits: Int) {
        precondition(shards.count == 1 << shardBits, "one shard per value of the hash's top bits")
        self.shards = shards
        self.shardBits = shardBits
    }

    var count: Int { shards.reduce(0) { $0 + $1.count } }

    func shard(of hash: UInt64) -> Int { Self.shard(of: hash, shardBits: shardBits) }

    static func shardBits(forExpectedCount count: Int) -> Int { count >= 1 << 16 ? 6 : 0 }

    static func shard(of hash: UInt64, shardBits: Int) -> Int {
        shardBits == 0 ? 0 : Int(truncatingIfNeeded: hash >> UInt64(64 - shardBits))
    }

    func lookup(_ name: String) -> Value? {
        var name = name
        return name.withUTF8 { lookup(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    func lookup(_ name: UnsafeRawBufferPointer) -> Value? {
        let hash = Self.hash(name)
        return shards[shard(of: hash)].lookup(name, hash: hash)
    }

    mutating func insertIfAbsent(_ name: HostName, _ value: Value) -> Value? {
        let hash = Self.hash(name.bytes)
        return shards[shard(of: hash)].insertIfAbsent(name, hash: hash, value)
    }

    /// Removes `name` when its value satisfies `isExpected`.
    @discardableResult
    mutating func remove(_ name: String, ifValue isExpected: (Value) -> Bool) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            let hash = Self.hash(UnsafeRawBufferPointer(bytes))
            return shards[shard(of: hash)].remove(UnsafeRawBufferPointer(bytes), hash: hash, ifValue: isExpected)
        }
    }

    mutating func set(_ name: HostName, _ value: Value) {
        let hash = Self.hash(name.bytes)
        shards[shard(of: hash)].set(name, hash: hash, value)
    }

    /// Bits 40–47: apart from the low bits that pick the slot and the top bits that pick the shard.
    static func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 40) & 0xFF }

    @inline(__always)
    static func hash(_ name: UnsafeRawBufferPointer) -> UInt64 {
        // The word hash, then a finaliser (MurmurHash3's) so every output bit depends on every input bit:
        // the slot comes from the low bits, the shard from the high ones.
        var hash = FNV1a.wordHash(name)
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return hash
    }
}
