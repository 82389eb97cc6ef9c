import Support

/// What a loaded config keeps so that loading an edited version of the same file redoes only the sites
/// whose bytes changed.
///
/// A site's decoded form, document, served bytes and findings depend only on the site's own bytes, the
/// `apps` names it refers to, and (for a verbatim site) the hosted file. So a site whose bytes are
/// identical to a site of the previous load, under identical `apps`, is taken over instead of being
/// parsed, decoded, generated and validated again; its findings move with it to its new line, column
/// and index. A reload of a 10,000-host config where one site changed costs a fraction of a full load.
struct SiteReuse: Sendable {
    /// A class: thousands are handed from one load to the next, and a struct this size costs a
    /// dozen reference-count updates per copy.
    final class Entry: Sendable {
        let span: Range<Int>
        let start: SourceLocation
        let index: Int
        let hash: UInt64
        /// A second, independent hash of the same bytes: with the first and the length it stands for the
        /// site's text, so the config's bytes (100 MB for a million hosts) need not be kept.
        let check: UInt64
        let loaded: LoadedSite
        /// This site's findings from decoding it (in the config file).
        let decodeFindings: [Diagnostic]
        /// From building its document: in the config file, or in a verbatim site's hosted file (valid
        /// while that file's bytes are unchanged).
        let buildFindings: [Diagnostic]

        init(
            span: Range<Int>,
            start: SourceLocation,
            index: Int,
            hash: UInt64,
            check: UInt64,
            loaded: LoadedSite,
            decodeFindings: [Diagnostic],
            buildFindings: [Diagnostic]
        ) {
            self.span = span
            self.start = start
            self.index = index
            self.hash = hash
            self.check = check
            self.loaded = loaded
            self.decodeFindings = decodeFindings
            self.buildFindings = buildFindings
        }
    }

    let configPath: String
    let aliases: AppTable
    /// The second hash's seed: any constant that makes it a different function from the first.
    static let checkSeed: UInt64 = 0x5851_F42D_4C95_7F2D
    /// One per site, in the order of `LoadedConfig.sites`.
    let entries: [Entry]
    let hostTable: HostTable<Int>
    private let entryByHash: [UInt64: Int]

    init(configPath: String, aliases: AppTable, entries: [Entry], hostTable: HostTable<Int>) {
        self.configPath = configPath
        self.hostTable = hostTable
        self.aliases = aliases
        self.entries = entries
        var byHash: [UInt64: Int] = [:]
        byHash.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() { byHash[entry.hash] = position }
        entryByHash = byHash
    }

    /// The entry whose text is `bytes[span]`: same length and both hashes (a false match needs two
    /// independent 64-bit hashes to collide at once).
    func entry(matching span: Range<Int>, hash: UInt64, check: UInt64) -> Entry? {
        guard let position = entryByHash[hash] else { return nil }
        let entry = entries[position]
        return entry.span.count == span.count && entry.check == check ? entry : nil
    }

    /// A fast hash for finding candidates (``FNV1a/wordHash(_:seed:)``). `seed` gives the independent
    /// second hash.
    static func hash(_ bytes: [UInt8], _ span: Range<Int>, seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { FNV1a.wordHash(UnsafeRawBufferPointer(rebasing: $0[span]), seed: seed) }
    }

    /// The byte range of each element of the root object's `"sites"` array, found by a structural scan
    /// that builds nothing. Nil when the text is anything but plain JSON with sites that are objects:
    /// then nothing is reused and the full parse reports what is wrong.
    static func siteSpans(_ bytes: [UInt8]) -> [Range<Int>]? {
        bytes.withUnsafeBufferPointer { text -> [Range<Int>]? in
            let quote = UInt8(ascii: "\"")
            let backslash = UInt8(ascii: "\\")
            var spans: [Range<Int>] = []
            var depth = 0
            var expectingKey = false
            var lastKeyIsSites = false
            var sitesDepth = 0  // the depth inside the sites array once it opened; 0 before
            var elementStart = -1
            var cursor = 0
            while cursor < text.count {
                let byte = text[cursor]
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ":"):
                    cursor += 1
                    continue
                case quote:
                    let start = cursor + 1
                    cursor = start
                    while cursor < text.count && text[cursor] != quote {
                        cursor += text[cursor] == backslash ? 2 : 1
                    }
                    guard cursor < text.count else { return nil }
                    if depth == 1 && expectingKey {
                        lastKeyIsSites =
                            cursor - start == 5 && text[start] == UInt8(ascii: "s") && text[start + 1] == UInt8(ascii: "i")
                            && text[start + 2] == UInt8(ascii: "t") && text[start + 3] == UInt8(ascii: "e")
                            && text[start + 4] == UInt8(ascii: "s")
                        expectingKey = false
                    } else if sitesDepth > 0 && depth == sitesDepth {
                        return nil  // a site that is a string
                    }
                    cursor += 1
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if sitesDepth > 0 && depth == sitesDepth { elementStart = cursor }
                    depth += 1
                    if depth == 2 && lastKeyIsSites && byte == UInt8(ascii: "[") {
                        guard sitesDepth == 0 else { return nil }  // a second "sites": the parser reports it
                        sitesDepth = 2
                    }
                    if depth == 1 { expectingKey = true }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth < 0 { return nil }
                    if sitesDepth > 0 && depth == sitesDepth {
                        guard elementStart >= 0 else { return nil }
                        spans.append(elementStart..<(cursor + 1))
                        elementStart = -1
                    } else if sitesDepth > 0 && depth == sitesDepth - 1 {
                        return spans  // the sites array closed; the rest is the parser's business
                    }
                case UInt8(ascii: ","):
                    if depth == 1 { expectingKey = true }
                default:
                    // Numbers, literals, and anything that is not JSON (comments): a site is never one.
                    if sitesDepth > 0 && depth == sitesDepth { return nil }
                    if byte == UInt8(ascii: "/") { return nil }
                }
                cursor += 1
            }
            return nil
        }
    }
}

extension Diagnostic {
    /// The same finding about a site that moved from `old` (array index `oldIndex`) to `new`.
    func moved(from old: SourceLocation, index oldIndex: Int, to new: SourceLocation, index newIndex: Int) -> Diagnostic {
        var moved = self
        if let location {
            moved.location = SourceLocation(
                offset: location.offset - old.offset + new.offset,
                line: location.line - old.line + new.line,
                column: location.line == old.line ? location.column - old.column + new.column : location.column
            )
        }
        if oldIndex != newIndex {
            let oldPrefix = "$.sites[\(oldIndex)]"
            let newPrefix = "$.sites[\(newIndex)]"
            moved.path = path?.replacingAll(oldPrefix, with: newPrefix)
            moved.message = message.replacingAll(oldPrefix, with: newPrefix)
        }
        return moved
    }
}
