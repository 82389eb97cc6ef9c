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

    public init(chunks: [Chunk]) {
        self.chunks = chunks
        var starts: [Int] = [0]
        starts.reserveCapacity(chunks.count + 1)
        for chunk in chunks { starts.append(starts[starts.count - 1] + chunk.sites.count) }
        self.starts = starts
        hostCount = chunks.reduce(0) { $0 + $1.hostCount }
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
