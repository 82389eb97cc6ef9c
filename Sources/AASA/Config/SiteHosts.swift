/// A site's hosts in one allocation: each pattern's bytes and where it was written.
///
/// At a million hosts the names are the largest part of a loaded config that is not a document: as Swift
/// strings each was an object of its own (80 bytes in malloc's chunks for a 26-byte name) and each site
/// an array of located patterns besides (144 bytes for two hosts) — 300 bytes a site, where these bytes
/// are about 130. The host table refers to the names here (``HostName``) instead of keeping strings.
///
/// Immutable once made, hence Sendable.
public struct SiteHosts: @unchecked Sendable {
    let storage: Storage

    final class Storage: ManagedBuffer<Header, UInt8> {}

    struct Header {
        let count: Int
        let paths: Paths
    }

    /// Each host's JSON path, kept as the one path it is derived from where it can be.
    enum Paths {
        /// The same path for every host.
        case same(JSONPath)
        /// `<site>.hosts[i]`, the site's path kept: a config's hosts as the decoder read them.
        case hostsOf(JSONPath)
        case each([JSONPath])
    }

    /// Per host, in the tail: where its name starts, with two flags in the top bits, and its source
    /// location; after the last record one more word says where the names end. A name is then read from
    /// two words of the tail (the header, a class's stored property, costs an exclusivity check per read:
    /// a name is read on every request).
    private static let recordSize = 16
    private static let wildcardFlag: UInt32 = 1 << 31
    private static let locatedFlag: UInt32 = 1 << 30
    private static let offsetMask: UInt32 = locatedFlag - 1

    /// Hosts as located patterns, each with its own path.
    public init(_ hosts: [Located<HostPattern>]) {
        let paths: Paths
        if let first = hosts.first?.origin.path, hosts.allSatisfy({ $0.origin.path == first }) {
            paths = .same(first)
        } else {
            paths = .each(hosts.map(\.origin.path))
        }
        self.init(hosts.map { ($0.value, $0.origin.location) }, paths: paths)
    }

    /// Hosts read from `<site>.hosts`, in order, none left out: each one's path is `<site>.hosts[i]`.
    public init(_ hosts: [(pattern: HostPattern, location: SourceLocation?)], hostsOf site: JSONPath) {
        self.init(hosts, paths: .hostsOf(site))
    }

    /// Hosts written nowhere (made by code): no location, the root path.
    public init(patterns: [HostPattern]) {
        self.init(patterns.map { ($0, nil) }, paths: .same(.root))
    }

    init(_ hosts: [(pattern: HostPattern, location: SourceLocation?)], paths: Paths) {
        var nameBytes = 0
        for host in hosts { nameBytes += host.pattern.name.utf8.count }
        let namesStart = hosts.count * Self.recordSize + 4
        let made = Storage.create(minimumCapacity: namesStart + nameBytes) { storage in
            storage.withUnsafeMutablePointerToElements { elements in
                let tail = UnsafeMutableRawPointer(elements)
                var cursor = namesStart
                for (index, host) in hosts.enumerated() {
                    var word = UInt32(cursor)
                    if host.pattern.isWildcard { word |= Self.wildcardFlag }
                    if host.location != nil { word |= Self.locatedFlag }
                    let record = tail + index * Self.recordSize
                    record.storeBytes(of: word, as: UInt32.self)
                    record.storeBytes(of: UInt32(truncatingIfNeeded: host.location?.offset ?? 0), toByteOffset: 4, as: UInt32.self)
                    record.storeBytes(of: UInt32(truncatingIfNeeded: host.location?.line ?? 0), toByteOffset: 8, as: UInt32.self)
                    record.storeBytes(of: UInt32(truncatingIfNeeded: host.location?.column ?? 0), toByteOffset: 12, as: UInt32.self)
                    var name = host.pattern.name
                    name.withUTF8 { bytes in
                        if let base = bytes.baseAddress { (tail + cursor).copyMemory(from: base, byteCount: bytes.count) }
                        cursor += bytes.count
                    }
                }
                (tail + hosts.count * Self.recordSize).storeBytes(of: UInt32(cursor), as: UInt32.self)
                return Header(count: hosts.count, paths: paths)
            }
        }
        storage = unsafeDowncast(made, to: Storage.self)
    }

    private func record(_ index: Int) -> (word: UInt32, location: SourceLocation?) {
        storage.withUnsafeMutablePointerToElements { elements in
            let record = UnsafeRawPointer(elements) + index * Self.recordSize
            let word = record.loadUnaligned(as: UInt32.self)
            guard word & Self.locatedFlag != 0 else { return (word, nil) }
            return (
                word,
                SourceLocation(
                    offset: Int(record.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
                    line: Int(record.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
                    column: Int(record.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                )
            )
        }
    }

    /// The bytes of host `index`'s name (a wildcard's without `*.`), valid while this value (or
    /// ``storage``) lives.
    @inline(__always)
    func nameBytes(_ index: Int) -> UnsafeRawBufferPointer {
        storage.withUnsafeMutablePointerToElements { elements in
            let tail = UnsafeRawPointer(elements)
            let start = Int(tail.loadUnaligned(fromByteOffset: index * Self.recordSize, as: UInt32.self) & Self.offsetMask)
            // The next record's start, or the end word after the last record.
            let end = Int(tail.loadUnaligned(fromByteOffset: (index + 1) * Self.recordSize, as: UInt32.self) & Self.offsetMask)
            return UnsafeRawBufferPointer(start: tail + start, count: end - start)
        }
    }

    public func isWildcard(_ index: Int) -> Bool {
        storage.withUnsafeMutablePointerToElements {
            UnsafeRawPointer($0).loadUnaligned(fromByteOffset: index * Self.recordSize, as: UInt32.self) & Self.wildcardFlag != 0
        }
    }

    /// Where host `index` was written (no path made, unlike the subscript's element).
    public func location(_ index: Int) -> SourceLocation? { record(index).location }

    /// Host `index` as a pattern (a string made for it).
    public func pattern(_ index: Int) -> HostPattern {
        let name = String(decoding: nameBytes(index), as: UTF8.self)
        return isWildcard(index) ? .wildcard(name) : .exact(name)
    }

    /// The exact host `index` as the host table keeps it; nil for a wildcard.
    func exactName(_ index: Int) -> HostName? { isWildcard(index) ? nil : HostName(storage, index) }

    public var patterns: [HostPattern] { indices.map(pattern) }

    /// The same patterns in the same order (where they were written aside): what a reload asks to tell
    /// whether the host table changes.
    public func hasSamePatterns(as other: SiteHosts) -> Bool {
        if storage === other.storage { return true }
        guard count == other.count else { return false }
        for index in indices where isWildcard(index) != other.isWildcard(index) || !nameBytes(index).elementsEqual(other.nameBytes(index)) {
            return false
        }
        return true
    }

    /// Whether every host's path is the site's own `hosts[i]` under `site` (how a config's hosts are read).
    public func arePaths(hostsOf site: JSONPath) -> Bool {
        if case .hostsOf(let path) = storage.header.paths { return path == site }
        return isEmpty
    }

    /// The same hosts, every one with `path` (the serving form keeps no path a host).
    func sharingPath(_ path: JSONPath) -> SiteHosts {
        if case .same(let same) = storage.header.paths, same == path { return self }
        return SiteHosts(indices.map { (pattern($0), record($0).location) }, paths: .same(path))
    }

    public static let empty = SiteHosts([])
}

extension SiteHosts: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.header.count }

    public subscript(index: Int) -> Located<HostPattern> {
        precondition(index >= 0 && index < count, "host index out of range")
        let path: JSONPath
        switch storage.header.paths {
        case .same(let same): path = same
        case .hostsOf(let site): path = site.key("hosts").index(index)
        case .each(let paths): path = paths[index]
        }
        return Located(pattern(index), Provenance(record(index).location, path))
    }
}

extension SiteHosts: ExpressibleByArrayLiteral {
    public init(arrayLiteral hosts: Located<HostPattern>...) { self.init(hosts) }
}

/// An exact host name the host table keeps: a site's hosts and which of them, instead of a string of
/// its own.
struct HostName: @unchecked Sendable {
    let storage: SiteHosts.Storage
    let index: UInt32

    init(_ storage: SiteHosts.Storage, _ index: Int) {
        self.storage = storage
        self.index = UInt32(index)
    }

    /// A name that belongs to no site (certificates, tests): a one-host list of its own.
    init(_ name: String) {
        self.init(SiteHosts(patterns: [.exact(name)]).storage, 0)
    }

    var bytes: UnsafeRawBufferPointer { SiteHosts(storage: storage).nameBytes(Int(index)) }

    var string: String { String(decoding: bytes, as: UTF8.self) }
}

extension SiteHosts {
    init(storage: Storage) { self.storage = storage }
}

extension HostPattern {
    /// The name without `*.`.
    var name: String {
        switch self {
        case .exact(let name), .wildcard(let name): return name
        }
    }
}
