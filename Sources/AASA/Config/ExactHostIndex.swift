/// Exact host names → values, for a million names: open addressing over 8-byte slots, each holding a
/// 32-bit tag of the name's hash and the entry's index, so a probe compares names only when the tags
/// agree (a `[String: Value]` compared the strings of every bucket it passed).
///
/// The table is split into shards by the hash's top bits. Shards are independent, so the loader builds
/// them on several threads at once (``HostTableBuilder``); a lookup picks its shard with one shift.
/// Names come from the config, never from requests, so request traffic cannot lengthen a probe.
struct ExactHostIndex<Value: Sendable>: Sendable {
    struct Shard: Sendable {
        /// 0: empty; otherwise `tag << 32 | (entry + 1)`.
        private var slots: [UInt64]
        private var names: [String] = []
        private var values: [Value] = []

        init(expectedCount: Int) {
            slots = Array(repeating: 0, count: Shard.slotCount(for: expectedCount))
            names.reserveCapacity(expectedCount)
            values.reserveCapacity(expectedCount)
        }

        var count: Int { names.count }

        /// Room for `count` entries at most 70 % full, a power of two.
        private static func slotCount(for count: Int) -> Int {
            var slots = 8
            while slots * 7 < count * 10 { slots *= 2 }
            return slots
        }

        /// The slot and entry holding `name`, if it is here.
        private func find(_ name: String, hash: UInt64) -> (slot: Int, entry: Int)? {
            let mask = slots.count - 1
            let tag = ExactHostIndex.tag(hash)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let word = slots[slot]
                if word == 0 { return nil }
                if UInt32(truncatingIfNeeded: word >> 32) == tag {
                    let entry = Self.entry(word)
                    if names[entry] == name { return (slot, entry) }
                }
                slot = (slot + 1) & mask
            }
        }

        private static func entry(_ word: UInt64) -> Int { Int(truncatingIfNeeded: word & 0xFFFF_FFFF) - 1 }

        func lookup(_ name: String, hash: UInt64) -> Value? {
            find(name, hash: hash).map { values[$0.entry] }
        }

        /// The value and the name as stored: the same string object every time, so a caller keying a
        /// table by it compares by identity.
        func entry(_ name: String, hash: UInt64) -> (value: Value, name: String)? {
            find(name, hash: hash).map { (values[$0.entry], names[$0.entry]) }
        }

        /// Adds `name` unless it is there already; then returns what it maps to (the first value stays).
        mutating func insertIfAbsent(_ name: String, hash: UInt64, _ value: Value) -> Value? {
            if let existing = lookup(name, hash: hash) { return existing }
            if (names.count + 1) * 10 > slots.count * 7 { grow() }
            names.append(name)
            values.append(value)
            place(hash: hash, entry: names.count - 1)
            return nil
        }

        /// Replaces the value of `name`, or adds it.
        mutating func set(_ name: String, hash: UInt64, _ value: Value) {
            if let found = find(name, hash: hash) {
                values[found.entry] = value
            } else {
                _ = insertIfAbsent(name, hash: hash, value)
            }
        }

        /// Removes `name` when its value satisfies `isExpected`; true when it did.
        mutating func remove(_ name: String, hash: UInt64, ifValue isExpected: (Value) -> Bool) -> Bool {
            guard let (slot, entry) = find(name, hash: hash) else { return false }
            let mask = slots.count - 1
            guard isExpected(values[entry]) else { return false }
            // Close the gap so every later name of the probe run stays reachable (backward shift).
            var hole = slot
            var next = (hole + 1) & mask
            while slots[next] != 0 {
                let entryThere = Self.entry(slots[next])
                let home = Int(truncatingIfNeeded: ExactHostIndex.hash(names[entryThere])) & mask
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
            let last = names.count - 1
            if entry != last {
                let lastHash = ExactHostIndex.hash(names[last])
                var probe = Int(truncatingIfNeeded: lastHash) & mask
                while Self.entry(slots[probe]) != last { probe = (probe + 1) & mask }
                slots[probe] = UInt64(ExactHostIndex.tag(lastHash)) << 32 | UInt64(entry + 1)
                names[entry] = names[last]
                values[entry] = values[last]
            }
            names.removeLast()
            values.removeLast()
            return true
        }

        private mutating func place(hash: UInt64, entry: Int) {
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt64(ExactHostIndex.tag(hash)) << 32 | UInt64(entry + 1)
        }

        private mutating func grow() {
            slots = Array(repeating: 0, count: slots.count * 2)
            for entry in names.indices { place(hash: ExactHostIndex.hash(names[entry]), entry: entry) }
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
        let hash = Self.hash(name)
        return shards[shard(of: hash)].lookup(name, hash: hash)
    }

    func entry(_ name: String) -> (value: Value, name: String)? {
        let hash = Self.hash(name)
        return shards[shard(of: hash)].entry(name, hash: hash)
    }

    mutating func insertIfAbsent(_ name: String, _ value: Value) -> Value? {
        let hash = Self.hash(name)
        return shards[shard(of: hash)].insertIfAbsent(name, hash: hash, value)
    }

    /// Removes `name` when its value satisfies `isExpected`.
    @discardableResult
    mutating func remove(_ name: String, ifValue isExpected: (Value) -> Bool) -> Bool {
        let hash = Self.hash(name)
        return shards[shard(of: hash)].remove(name, hash: hash, ifValue: isExpected)
    }

    mutating func set(_ name: String, _ value: Value) {
        let hash = Self.hash(name)
        shards[shard(of: hash)].set(name, hash: hash, value)
    }

    /// Bits 26–57: apart from the low bits that pick the slot and the top bits that pick the shard.
    static func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 26) }

    static func hash(_ name: String) -> UInt64 {
        var name = name
        return name.withUTF8 { bytes in
            // The word hash, then a finaliser (MurmurHash3's) so every output bit depends on every input bit:
            // the slot comes from the low bits, the shard from the high ones.
            var hash = FNV1a.wordHash(UnsafeRawBufferPointer(bytes))
            hash ^= hash >> 33
            hash &*= 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 33
            hash &*= 0xC4CE_B9FE_1A85_EC53
            hash ^= hash >> 33
            return hash
        }
    }
}
