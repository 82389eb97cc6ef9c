/// Every site of a loaded config, in chunks: the config's own sites, then one chunk per included file.
///
/// A reload builds a new chunk only for a file that changed and takes the others over as the very same
/// objects, so handing a million sites from one load to the next costs a pointer per file, not a
/// reference-count update (and a cache miss) per site. Positions are flat, as in one array: the host
/// table maps a host to its site's position.
public struct SiteList: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    /// Sites loaded together from one file; immutable, so the next load may take it over whole.
    public final class Chunk: Sendable {
        public let sites: [LoadedSite]
        /// The included file the sites are written in; nil for the config's own sites.
        public let source: String?
        public let hostCount: Int
        /// The files the sites host verbatim (AASA and assetlinks): what a reload must watch.
        public let hostedFiles: [String]

        public init(_ sites: [LoadedSite], source: String? = nil) {
            self.sites = sites
            self.source = source
            hostCount = sites.reduce(0) { $0 + $1.site.hosts.count }
            hostedFiles = sites.flatMap { [$0.file, $0.assetLinks?.file].compactMap { $0 } }
        }
    }

    public let chunks: [Chunk]
    /// Where each chunk's first site is in the flat order, then the count.
    private let starts: [Int]
    public let hostCount: Int
    /// Each chunk's slot. The host table maps a host to a *position*, `slot << 32 | offset in its
    /// chunk`: a chunk keeps its slot from one load to the next, so adding or removing a file changes
    /// no other file's positions, and the table needs updating only for that file's hosts.
    private let slots: [Int]
    /// Slot → chunk index (-1: free).
    private let chunkBySlot: [Int]

    /// `previous`: the list these chunks replace. A chunk taken over keeps its slot; a new chunk from a
    /// file that had one takes that file's slot; the rest take the lowest free slots.
    public init(chunks: [Chunk], keepingSlotsOf previous: SiteList? = nil) {
        self.chunks = chunks
        var starts: [Int] = [0]
        starts.reserveCapacity(chunks.count + 1)
        for chunk in chunks { starts.append(starts[starts.count - 1] + chunk.sites.count) }
        self.starts = starts
        hostCount = chunks.reduce(0) { $0 + $1.hostCount }
        var slots = [Int](repeating: -1, count: chunks.count)
        if let previous, !previous.chunks.isEmpty {
            var slotOf: [ObjectIdentifier: Int] = [:]
            var slotOfSource: [String?: Int] = [:]
            for (index, chunk) in previous.chunks.enumerated() {
                slotOf[ObjectIdentifier(chunk)] = previous.slots[index]
                slotOfSource[chunk.source] = previous.slots[index]
            }
            var taken = Set<Int>()
            for (index, chunk) in chunks.enumerated() {
                if let slot = slotOf[ObjectIdentifier(chunk)], taken.insert(slot).inserted { slots[index] = slot }
            }
            for (index, chunk) in chunks.enumerated() where slots[index] < 0 {
                if let slot = slotOfSource[chunk.source], taken.insert(slot).inserted { slots[index] = slot }
            }
            var next = 0
            for index in chunks.indices where slots[index] < 0 {
                while taken.contains(next) { next += 1 }
                slots[index] = next
                taken.insert(next)
            }
        } else {
            slots = Array(chunks.indices)
        }
        var chunkBySlot = [Int](repeating: -1, count: (slots.max() ?? -1) + 1)
        for (index, slot) in slots.enumerated() { chunkBySlot[slot] = index }
        self.slots = slots
        self.chunkBySlot = chunkBySlot
    }

    /// The host-table position of the site at `offset` in chunk `chunk`.
    public func position(chunk: Int, offset: Int) -> Int { slots[chunk] << 32 | offset }

    /// The chunk and offset a host-table position stands for.
    public func locate(position: Int) -> (chunk: Int, offset: Int) {
        let slot = position >> 32
        precondition(slot < chunkBySlot.count && chunkBySlot[slot] >= 0, "site position out of range")
        return (chunkBySlot[slot], position & 0xFFFF_FFFF)
    }

    /// The site at a host-table position.
    public func site(atPosition position: Int) -> LoadedSite {
        let (chunk, offset) = locate(position: position)
        return chunks[chunk].sites[offset]
    }

    public init(_ sites: [LoadedSite]) {
        self.init(chunks: sites.isEmpty ? [] : [Chunk(sites)])
    }

    public init(arrayLiteral sites: LoadedSite...) { self.init(sites) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts[starts.count - 1] }

    public subscript(position: Int) -> LoadedSite {
        let (chunk, offset) = locate(position)
        return chunks[chunk].sites[offset]
    }

    /// The chunk holding the site at `position`, and its place in that chunk: a binary search over the
    /// chunks (about ten steps for a thousand files), made on every request by the server.
    public func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        precondition(position >= 0 && position < endIndex, "site position out of range")
        if chunks.count == 1 { return (0, position) }
        var low = 0
        var high = chunks.count - 1
        // The last chunk whose start is at or before `position` (empty chunks share their successor's start).
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return (low, position - starts[low])
    }

    /// The files every site hosts verbatim, in site order.
    public var hostedFiles: [String] { chunks.flatMap(\.hostedFiles) }

    public func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    /// Walks chunk by chunk, without a search per site.
    public struct Iterator: IteratorProtocol {
        private let chunks: [Chunk]
        private var chunk = 0
        private var offset = 0

        init(chunks: [Chunk]) { self.chunks = chunks }

        public mutating func next() -> LoadedSite? {
            while chunk < chunks.count {
                let sites = chunks[chunk].sites
                if offset < sites.count {
                    offset += 1
                    return sites[offset - 1]
                }
                chunk += 1
                offset = 0
            }
            return nil
        }
    }
}
