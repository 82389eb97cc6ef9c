import Support

/// What a restart needs of the included files it has seen before, kept in the state directory: each
/// file's sites as serving holds them (hosts, the document's bytes, the Android statements), under the
/// content digest of the file they were built from. A start that finds a file's bytes under the same
/// digest, built by the same binary with the same `apps`, takes its sites from here instead of parsing,
/// decoding, generating and checking them again (djb's cdb and Knot DNS's compiled zones are the idea).
///
/// It also keeps what a restart needs of each hosted AASA file found without a finding: under the
/// digest of the file's bytes, that it was checked, whether it has App Clips (the one fact a site's own
/// check reads of it) and its gzip form. A start that reads the same bytes serves them without parsing,
/// checking or compressing them again — a 101 KB document was all of a small config's start-up gap to nginx.
///
/// A cache, never trusted over the files: the whole snapshot carries a checksum, and one that is
/// truncated, damaged, of another format version or of another build is ignored (and rewritten after
/// the load); a file whose bytes changed is read as if there were no snapshot. Only files the snapshot
/// can restore exactly are kept: sites generated from the config (or Android-only), no hosted files,
/// link rules or landing pages, and no findings at all; and only hosted documents without a finding.
public struct CompiledSites: Sendable {
    /// Bumped whenever the layout below or the meaning of a field changes.
    package static let formatVersion: UInt32 = 2
    package static let magic: [UInt8] = Array("AASASITE".utf8)

    /// A file's bytes, identified: its length and two independent 64-bit hashes of its content.
    public struct Digest: Sendable, Hashable {
        var count: UInt64
        var first: UInt64
        var second: UInt64

        public init(_ bytes: [UInt8]) {
            count = UInt64(bytes.count)
            (first, second) = bytes.withUnsafeBytes {
                (FNV1a.wordHash($0), FNV1a.wordHash($0, seed: 0x5eed_0f_c0_4d_17e5))
            }
        }

        init(count: UInt64, first: UInt64, second: UInt64) {
            self.count = count
            self.first = first
            self.second = second
        }
    }

    /// Where each file's entry lies in ``bytes`` (verified against its checksum when read), and its digest.
    package struct Entry: Sendable {
        package var digest: Digest
        var body: Range<Int>
    }

    /// The snapshot as read (a file mapped into memory, kept alive by `owner`): entries are decoded into
    /// sites only when their file is asked for.
    // Read-only memory that `owner` keeps mapped for as long as this value lives.
    nonisolated(unsafe) let bytes: UnsafeRawBufferPointer
    let owner: any Sendable
    package var entries: [String: Entry]
    /// Hosted documents by the digest of their bytes: where each one's flags and gzip form lie in ``bytes``.
    package var documents: [Digest: Range<Int>] = [:]
    /// Which binary, `apps` and mode built the sites: another one's snapshot restores nothing.
    var context: UInt64
    /// Which binary and mode checked the hosted documents (what a document's check depends on: not `apps`).
    var documentContext: UInt64

    /// The context a load runs in: the binary (its build identity), the app table the sites' documents
    /// are generated from, and whether only the serving form is kept.
    public static func context(build: String, aliases: AppTable, servingOnly: Bool) -> UInt64 {
        // Dictionaries iterate in a per-process order: sorted, so the same table gives the same text.
        var text = "\(build)\n\(servingOnly)\n"
        for key in aliases.apple.keys.sorted() { text += "apple \(key)=\(aliases.apple[key]!)\n" }
        for key in aliases.android.keys.sorted() { text += "android \(key)=\(String(reflecting: aliases.android[key]!))\n" }
        for key in aliases.listings.keys.sorted() { text += "listing \(key)=\(String(reflecting: aliases.listings[key]!))\n" }
        return Array(text.utf8).withUnsafeBytes { FNV1a.wordHash($0) }
    }

    /// The context a hosted document's check runs in: the binary and the mode. Cheap to compute, unlike
    /// ``context(build:aliases:servingOnly:)``, whose text of the app table takes reflection (1.4 M
    /// instructions at every start).
    public static func documentContext(build: String, servingOnly: Bool) -> UInt64 {
        Array("\(build)\n\(servingOnly)\nhosted documents\n".utf8).withUnsafeBytes { FNV1a.wordHash($0) }
    }

    /// What a load restores from and keeps digests for: the build identity (part of the context) and
    /// how to read the snapshot of the config's state directory (resolved against the config).
    public struct Input: Sendable {
        public var build: String
        /// A document's gzip form as serving sends it, empty when compressing does not pay: made once for a
        /// hosted document the load checked (``GzipForm``), when first needed, then served and kept from there.
        public var compress: @Sendable ([UInt8]) -> [UInt8]
        public var read: @Sendable (_ stateDirectory: String) -> CompiledSites?

        public init(
            build: String,
            compress: @escaping @Sendable ([UInt8]) -> [UInt8],
            read: @escaping @Sendable (_ stateDirectory: String) -> CompiledSites?
        ) {
            self.build = build
            self.compress = compress
            self.read = read
        }
    }

    /// The file a state directory keeps the snapshot in.
    public static let fileName = "compiled-sites"

    /// How many files it holds (for the log).
    public var fileCount: Int { entries.count }
    /// How many hosted documents it holds (for the log).
    public var documentCount: Int { documents.count }

    // MARK: - Restoring

    /// The sites `path` (as this load names it) held when the snapshot was written, if its bytes have the same digest and the load
    /// runs in the same context; nil sends the file through the full load.
    func sites(for path: String, configPath: String, digest: Digest, context: UInt64, pool: DocumentPool?) -> [LoadedSite]? {
        guard context == self.context, let entry = entries[Self.key(path, configPath: configPath)], entry.digest == digest else {
            return nil
        }
        var reader = SnapshotReader(bytes: bytes, offset: entry.body.lowerBound, end: entry.body.upperBound)
        // The path and digest, read when the snapshot was opened.
        guard reader.runSlice() != nil, reader.u64() != nil, reader.u64() != nil, reader.u64() != nil, let siteCount = reader.u32(),
            siteCount <= reader.remaining
        else { return nil }
        var sites: [LoadedSite] = []
        sites.reserveCapacity(Int(siteCount))
        let includedFile = LoadedSite.IncludedFile(path)
        for _ in 0..<siteCount {
            guard let flags = reader.u8(), flags & 0x7F == 1 || flags & 0x7F == 2, let index = reader.u32(),
                let location = reader.location(), let hostCount = reader.u32(), hostCount <= reader.remaining
            else { return nil }
            let sitePath = index == 0 ? JSONPath.root : JSONPath.rootIndex(Int(index) - 1)
            var hosts: [(pattern: HostPattern, location: SourceLocation?)] = []
            hosts.reserveCapacity(Int(hostCount))
            for _ in 0..<hostCount {
                guard let kind = reader.u8(), kind <= 1, let name = reader.string(), let hostLocation = reader.location() else {
                    return nil
                }
                hosts.append((kind == 1 ? .wildcard(name) : .exact(name), hostLocation))
            }
            guard let served = reader.runSlice(), let assetLinks = reader.run() else { return nil }
            let hasAndroid = flags & 0x80 != 0
            let site = Site(
                hosts: SiteHosts(hosts, hostsOf: sitePath),
                source: flags & 0x7F == 1 ? .generated(GeneratedSite()) : .none,
                android: hasAndroid ? .generated([]) : nil,
                origin: Provenance(location, sitePath)
            )
            let document = served.isEmpty ? ImmutableBytes.empty : ImmutableBytes.copy(served)
            sites.append(
                LoadedSite.servingForm(
                    site: site,
                    served: pool?.intern(document) ?? document,
                    file: nil,
                    assetLinks: hasAndroid ? LoadedSite.AssetLinks(bytes: assetLinks, statements: nil, file: nil, verbatimRoot: nil) : nil,
                    landingPage: nil,
                    definedIn: includedFile
                )
            )
        }
        guard reader.remaining == 0 else { return nil }
        return sites
    }

    /// A hosted AASA file whose bytes have `digest`, checked without a finding by the build and mode of
    /// `context` (``documentContext(build:servingOnly:)``); nil sends it through the full check.
    package func hostedDocument(_ digest: Digest, context: UInt64) -> HostedDocument? {
        guard context == documentContext, let body = documents[digest] else { return nil }
        var reader = SnapshotReader(bytes: bytes, offset: body.lowerBound, end: body.upperBound)
        guard let flags = reader.u8(), flags & ~HostedDocument.appClipsFlag == 0, let gzip = reader.runSlice(), reader.remaining == 0
        else { return nil }
        return HostedDocument(
            digest: digest,
            hasAppClips: flags & HostedDocument.appClipsFlag != 0,
            gzip: GzipForm(made: gzip.isEmpty ? .empty : ImmutableBytes.copy(gzip)),
            restored: true
        )
    }

    /// ``sites(for:configPath:digest:context:pool:)`` without a document pool (the fuzz target's door).
    package func sites(for path: String, configPath: String, digest: Digest, context: UInt64) -> [LoadedSite]? {
        sites(for: path, configPath: configPath, digest: digest, context: context, pool: nil)
    }

    /// A file's name in the snapshot: relative to the config's directory, so `--config config.json` and
    /// `--config /etc/aasa/config.json` find the same entries.
    static func key(_ path: String, configPath: String) -> String {
        guard let slash = configPath.lastIndex(of: "/") else { return path }
        let directory = configPath[...slash]
        return path.hasPrefix(directory) ? String(path.dropFirst(directory.count)) : path
    }

    // MARK: - Keeping

    /// Whether the snapshot can restore the file's sites exactly: built from bytes it has the digest of,
    /// no findings, and only what ``sites(for:digest:context:pool:)`` rebuilds.
    static func isStorable(_ file: IncludeState.File, path: String) -> Bool {
        guard file.digest != nil, file.findings.isEmpty else { return false }
        for (position, loaded) in file.group.sites.enumerated() {
            let site = loaded.site
            guard loaded.isServingForm, loaded.file == nil, loaded.landingPage == nil, site.links == nil, loaded.definedIn == path
            else { return false }
            if case .file = site.source { return false }
            if case .file = site.android { return false }
            if let assetLinks = loaded.assetLinks, assetLinks.file != nil { return false }
            // Where the site sits in its file: `$` for a file of one site, `$[n]` in an array of sites.
            guard site.origin.path == .root || site.origin.path == JSONPath.rootIndex(position) else { return false }
            guard site.hosts.arePaths(hostsOf: site.origin.path) else { return false }
        }
        return true
    }

    /// One file's entry: its path, digest and sites, as ``sites(for:digest:context:pool:)`` reads them.
    static func entryBody(_ file: IncludeState.File, key: String) -> [UInt8] {
        var writer = SnapshotWriter()
        writer.string(key)
        writer.u64(file.digest!.count)
        writer.u64(file.digest!.first)
        writer.u64(file.digest!.second)
        writer.u32(UInt32(file.group.sites.count))
        for (position, loaded) in file.group.sites.enumerated() {
            let site = loaded.site
            let source: UInt8 = if case .generated = site.source { 1 } else { 2 }
            writer.u8(source | (site.android != nil ? 0x80 : 0))
            writer.u32(site.origin.path == .root ? 0 : UInt32(position) + 1)
            writer.location(site.origin.location)
            writer.u32(UInt32(site.hosts.count))
            let hosts = site.hosts
            for index in hosts.indices {
                writer.u8(hosts.isWildcard(index) ? 1 : 0)
                writer.run(hosts.nameBytes(index))
                writer.location(hosts.location(index))
            }
            writer.run(loaded.served.buffer)
            writer.run(loaded.assetLinks?.bytes ?? [])
        }
        return writer.output
    }

    /// The snapshot of a load's included files and hosted documents, in parts to write one after another
    /// (a million sites are never one buffer): the header, an entry per file it can restore exactly, then
    /// one per hosted document checked without a finding. Nil when there is nothing to keep.
    public static func encode(_ config: LoadedConfig, configPath: String, build: String, servingOnly: Bool) -> AnySequence<[UInt8]>? {
        guard let aliases = config.includeState?.aliases ?? config.config?.appTable else { return nil }
        let files = config.includeState?.files ?? [:]
        let paths = files.keys.sorted().filter { isStorable(files[$0]!, path: $0) }
        var documents: [HostedDocument] = []
        var seen: Set<Digest> = []
        for loaded in config.sites {
            if let hosted = loaded.hosted, seen.insert(hosted.digest).inserted { documents.append(hosted) }
        }
        guard !paths.isEmpty || !documents.isEmpty else { return nil }
        var header = SnapshotWriter()
        header.bytes(magic)
        header.u32(formatVersion)
        // Without files the apps context restores nothing: not worth the reflection its text costs.
        header.u64(paths.isEmpty ? 0 : context(build: build, aliases: aliases, servingOnly: servingOnly))
        header.u64(documentContext(build: build, servingOnly: servingOnly))
        header.u32(UInt32(paths.count))
        header.u32(UInt32(documents.count))
        header.checksum()
        func framed(_ body: [UInt8]) -> [UInt8] {
            var entry = SnapshotWriter()
            entry.run(body)
            entry.u64(body.withUnsafeBytes { FNV1a.wordHash($0) })
            return entry.output
        }
        let fileParts = paths.lazy.map { path in framed(entryBody(files[path]!, key: key(path, configPath: configPath))) }
        let documentParts = documents.lazy.map { document in
            var body = SnapshotWriter()
            body.u64(document.digest.count)
            body.u64(document.digest.first)
            body.u64(document.digest.second)
            body.u8(document.hasAppClips ? HostedDocument.appClipsFlag : 0)
            body.run(document.gzip.bytes().buffer)
            return framed(body.output)
        }
        // Made as the file is written, one part at a time: a million sites' parts held together were the
        // whole snapshot (172 MB) in memory at once, a peak of 15 % over the server's size after every start.
        return AnySequence([AnySequence(CollectionOfOne(header.output)), AnySequence(fileParts), AnySequence(documentParts)].lazy.joined())
    }

    // MARK: - Reading

    package static let headerSize = 8 + 4 + 8 + 8 + 4 + 4 + 8

    /// A snapshot read back, every entry's checksum verified; nil when it is not one this build can
    /// trust (truncated, damaged, another format version).
    public static func decode(_ bytes: [UInt8]) -> CompiledSites? {
        let copy = ImmutableBytes.copy(bytes)
        return decode(copy.buffer, owner: copy)
    }

    /// As ``decode(_:)``, from bytes `owner` keeps alive (a mapped file) and that are never copied.
    public static func decode(_ bytes: UnsafeRawBufferPointer, owner: any Sendable) -> CompiledSites? {
        guard bytes.count >= headerSize else { return nil }
        var reader = SnapshotReader(bytes: bytes, offset: 0, end: bytes.count)
        let checksummed = FNV1a.wordHash(UnsafeRawBufferPointer(rebasing: bytes[..<(headerSize - 8)]))
        guard reader.bytes(magic.count) == magic, reader.u32() == formatVersion, let context = reader.u64(),
            let documentContext = reader.u64(),
            let fileCount = reader.u32(), let documentCount = reader.u32(), reader.u64() == checksummed
        else { return nil }
        /// The next entry's body, its checksum verified.
        func nextBody() -> Range<Int>? {
            guard let length = reader.u32(), Int(length) + 8 <= reader.remaining else { return nil }
            let body = reader.offset..<(reader.offset + Int(length))
            reader.offset = body.upperBound
            let computed = FNV1a.wordHash(UnsafeRawBufferPointer(rebasing: bytes[body]))
            return reader.u64() == computed ? body : nil
        }
        var entries: [String: Entry] = [:]
        for _ in 0..<fileCount {
            guard let body = nextBody() else { return nil }
            var entry = SnapshotReader(bytes: bytes, offset: body.lowerBound, end: body.upperBound)
            guard let path = entry.string(), let count = entry.u64(), let first = entry.u64(), let second = entry.u64(),
                entries[path] == nil
            else { return nil }
            entries[path] = Entry(digest: Digest(count: count, first: first, second: second), body: body)
        }
        var documents: [Digest: Range<Int>] = [:]
        for _ in 0..<documentCount {
            guard let body = nextBody() else { return nil }
            var entry = SnapshotReader(bytes: bytes, offset: body.lowerBound, end: body.upperBound)
            guard let count = entry.u64(), let first = entry.u64(), let second = entry.u64() else { return nil }
            let digest = Digest(count: count, first: first, second: second)
            guard documents[digest] == nil else { return nil }
            documents[digest] = entry.offset..<body.upperBound
        }
        guard reader.remaining == 0 else { return nil }
        return CompiledSites(
            bytes: bytes,
            owner: owner,
            entries: entries,
            documents: documents,
            context: context,
            documentContext: documentContext
        )
    }
}

private struct SnapshotWriter {
    var output: [UInt8] = []

    mutating func bytes(_ bytes: [UInt8]) { output += bytes }
    mutating func u8(_ value: UInt8) { output.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { output += $0 } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { output += $0 } }
    mutating func run(_ bytes: [UInt8]) { bytes.withUnsafeBytes { run($0) } }
    mutating func run(_ bytes: UnsafeRawBufferPointer) {
        u32(UInt32(bytes.count))
        output += bytes
    }
    mutating func string(_ text: String) { run(Array(text.utf8)) }
    /// Absent, or offset, line and column (each below 2^32: a config is at most 256 MiB).
    mutating func location(_ location: SourceLocation?) {
        guard let location else { return u8(0) }
        u8(1)
        u32(UInt32(truncatingIfNeeded: location.offset))
        u32(UInt32(truncatingIfNeeded: location.line))
        u32(UInt32(truncatingIfNeeded: location.column))
    }
    /// A checksum of everything written so far.
    mutating func checksum() { u64(output.withUnsafeBytes { FNV1a.wordHash($0) }) }
}

/// Reads what ``SnapshotWriter`` wrote; every read is bounded by `end` and answers nil past it.
private struct SnapshotReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    let end: Int

    var remaining: Int { end - offset }

    mutating func slice(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    mutating func bytes(_ count: Int) -> [UInt8]? { slice(count).map { Array($0) } }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func runSlice() -> UnsafeRawBufferPointer? {
        guard let count = u32() else { return nil }
        return slice(Int(count))
    }

    mutating func run() -> [UInt8]? { runSlice().map { Array($0) } }

    mutating func string() -> String? {
        guard let run = runSlice() else { return nil }
        return String(validating: run.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// nil: unreadable; .some(nil): written as absent.
    mutating func location() -> SourceLocation?? {
        guard let present = u8() else { return nil }
        if present == 0 { return .some(nil) }
        guard present == 1, let offset = u32(), let line = u32(), let column = u32() else { return nil }
        return .some(SourceLocation(offset: Int(offset), line: Int(line), column: Int(column)))
    }
}

extension LoadedConfig {
    /// Included files this load took from the snapshot, and those it built from their bytes.
    public var restoredIncludedFiles: Int { includeState?.restoredFiles ?? 0 }
    public var parsedIncludedFiles: Int { includeState?.parsedFiles ?? 0 }
    /// Hosted documents (each file's bytes counted once) this load took as the snapshot kept them, and
    /// those it checked itself without a finding (the ones a new snapshot would keep).
    public var restoredHostedDocuments: Int { hostedDocuments.restored.count }
    public var checkedHostedDocuments: Set<CompiledSites.Digest> { hostedDocuments.checked }

    /// Both, in one pass over the sites (a million of them at a large start).
    public var hostedDocuments: (restored: Set<CompiledSites.Digest>, checked: Set<CompiledSites.Digest>) {
        var restored: Set<CompiledSites.Digest> = []
        var checked: Set<CompiledSites.Digest> = []
        for group in sites.groups where group.hostedDocumentCount > 0 {
            for loaded in group.sites {
                guard let hosted = loaded.hosted else { continue }
                if hosted.restored { restored.insert(hosted.digest) } else { checked.insert(hosted.digest) }
            }
        }
        return (restored, checked)
    }
}
