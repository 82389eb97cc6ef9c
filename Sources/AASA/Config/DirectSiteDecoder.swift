/// A site of the common shape, decoded straight from its bytes: hosts, `applinks` with `details` of apps
/// and components, and the services' app lists — what nearly every tenant of a large fleet is, in an
/// included file or in the config's own `sites`.
///
/// A first start at a million hosts spent a third of its work building each site's JSON tree and freeing
/// it again (every node a heap value, freed through the runtime's generic witnesses) before decoding it.
/// This reader makes the same ``Site`` — the same values, positions and JSON paths — without the tree.
/// It takes nothing on trust: anything it does not know for certain the tree's way decodes without a
/// finding — another key, an escape or a non-ASCII byte, a number or null, a duplicate key, an unknown
/// app, a host the plain form does not cover, a syntax error — makes it return nil having kept nothing,
/// and the site is parsed and decoded as before, with every finding that path gives.
///
/// Where each value inside the site was written — a position and a JSON path, a small object per key and
/// index — is read only by findings. A serving load asks first for the site without them (``Origins``) and
/// decodes it again with them only when building it gave a finding: the site and its document are the same
/// either way, and a first start at 20,000 hosts loaded in 526 M instructions instead of 614 M.
struct DirectSiteDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    private var line: Int
    private var lineStart: Int
    /// Column minus offset on the site's first line; later lines start inside the site, where every byte
    /// is ASCII, so there a column is the distance from the line's start.
    private let firstLine: Int
    private let firstLineColumnBase: Int
    private let names: AppNames
    private let origins: Origins

    private struct Declined: Error {}

    /// Which values keep where they were written: every one, or only the site and its hosts (what a
    /// served site keeps, and what a finding of the host table names).
    enum Origins {
        case everyValue
        case siteAndHosts
    }

    /// The site whose `{` is at `location` (its line starting at offset `lineStart`), and where it ends; nil
    /// when the tree must decide.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>,
        at location: SourceLocation,
        lineStart: Int,
        path: JSONPath,
        names: AppNames,
        origins: Origins = .everyValue
    ) -> (site: Site, end: JSONParser.ValueEnd)? {
        var decoder = DirectSiteDecoder(bytes: bytes, at: location, lineStart: lineStart, names: names, origins: origins)
        do throws(Declined) {
            let site = try decoder.site(path)
            return (site, JSONParser.ValueEnd(location: decoder.location(), lineStart: decoder.lineStart))
        } catch {
            return nil
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, at location: SourceLocation, lineStart: Int, names: AppNames, origins: Origins) {
        self.bytes = bytes
        index = location.offset
        line = location.line
        self.lineStart = lineStart
        firstLine = location.line
        firstLineColumnBase = location.column - location.offset
        self.names = names
        self.origins = origins
    }

    // MARK: - The site's shape

    private static let siteKeys = KeySet(["hosts", "applinks", "webcredentials", "appclips", "activitycontinuation", "comment"])
    private static let applinksKeys = KeySet(["details", "comment"])
    private static let detailsKeys = KeySet(["apps", "components", "comment"])
    private static let serviceKeys = KeySet(["apps", "comment"])
    private static let componentKeys = KeySet(["/", "?", "#", "exclude", "comment", "caseSensitive", "percentEncoded"])

    /// The keys an object may have, each with its first eight bytes as written after the opening quote
    /// (its closing quote included when the key is shorter) as a word and a mask: a key in a file is then
    /// found with one masked comparison per candidate, where comparing bytes cost about 140 instructions a
    /// key, a dozen keys a site.
    private struct KeySet {
        struct Key {
            let text: StaticString
            let word: UInt64
            let mask: UInt64
        }

        let keys: [Key]

        init(_ texts: [StaticString]) {
            keys = texts.map { text in
                let written = Array(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) + [UInt8(ascii: "\"")]
                var word: UInt64 = 0
                var mask: UInt64 = 0
                for (position, byte) in written.prefix(8).enumerated() {
                    word |= UInt64(byte) << (8 * position)
                    mask |= 0xFF << (8 * position)
                }
                return Key(text: text, word: word, mask: mask)
            }
        }
    }

    private mutating func site(_ sitePath: JSONPath) throws(Declined) -> Site {
        let siteLocation = location()
        let path = origins == .everyValue ? sitePath : nil
        // Read into a site's host storage at the end: room for an apex and its www (and two more) at once.
        var hosts: [(pattern: HostPattern, location: SourceLocation?)] = []
        hosts.reserveCapacity(4)
        var generated = GeneratedSite()
        try object(keys: Self.siteKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            switch key {
            case 0:
                try decoder.array { (decoder: inout DirectSiteDecoder, _: Int) throws(Declined) in
                    let hostLocation = decoder.location()
                    let (start, end) = try decoder.stringBounds()
                    // Any other host has a finding or a form to explain: the tree's way gives it.
                    guard let pattern = HostPattern.parsePlain(UnsafeBufferPointer(rebasing: decoder.bytes[start..<end])) else {
                        throw Declined()
                    }
                    hosts.append((pattern, hostLocation))
                }
                if hosts.isEmpty { throw Declined() }
            case 1:
                generated.applinks = try decoder.applinks(path?.key("applinks"))
            case 2:
                let memberPath = path?.key("webcredentials")
                generated.webcredentialsOrigin = decoder.origin(memberPath)
                generated.webcredentials = try decoder.service(memberPath)
            case 3:
                let memberPath = path?.key("appclips")
                generated.appclipsOrigin = decoder.origin(memberPath)
                generated.appclips = try decoder.service(memberPath)
            case 4:
                let memberPath = path?.key("activitycontinuation")
                generated.activitycontinuationOrigin = decoder.origin(memberPath)
                generated.activitycontinuation = try decoder.service(memberPath)
            default:
                _ = try decoder.string()
            }
        }
        // Without hosts, or serving nothing, the site has a finding: the tree's way says which.
        if hosts.isEmpty
            || (generated.applinks == nil && generated.webcredentials == nil && generated.appclips == nil
                && generated.activitycontinuation == nil)
        {
            throw Declined()
        }
        return Site(
            hosts: SiteHosts(hosts, hostsOf: sitePath),
            source: .generated(consume generated),
            origin: Provenance(siteLocation, sitePath)
        )
    }

    private mutating func applinks(_ path: JSONPath?) throws(Declined) -> AppLinksConfig {
        var applinks = AppLinksConfig(origin: origin(path))
        var sawDetails = false
        try object(keys: Self.applinksKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            guard key == 0 else {
                _ = try decoder.string()
                return
            }
            sawDetails = true
            let detailsPath = path?.key("details")
            try decoder.array { (decoder: inout DirectSiteDecoder, position: Int) throws(Declined) in
                applinks.details.append(try decoder.details(detailsPath?.index(position)))
            }
        }
        guard sawDetails else { throw Declined() }
        return applinks
    }

    private mutating func details(_ path: JSONPath?) throws(Declined) -> DetailsConfig {
        var details = DetailsConfig(apps: [], components: [], origin: origin(path))
        var sawApps = false
        var sawComponents = false
        try object(keys: Self.detailsKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            switch key {
            case 0:
                sawApps = true
                details.apps = try decoder.apps(path?.key("apps"))
            case 1:
                sawComponents = true
                let componentsPath = path?.key("components")
                try decoder.array { (decoder: inout DirectSiteDecoder, position: Int) throws(Declined) in
                    try decoder.component(componentsPath?.index(position), into: &details.components)
                }
            default:
                _ = try decoder.string()
            }
        }
        guard sawApps, sawComponents else { throw Declined() }
        return details
    }

    private mutating func service(_ path: JSONPath?) throws(Declined) -> [Located<String>] {
        var apps: [Located<String>]?
        try object(keys: Self.serviceKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            if key == 0 { apps = try decoder.apps(path?.key("apps")) } else { _ = try decoder.string() }
        }
        guard let apps else { throw Declined() }
        return apps
    }

    /// An app list resolved as ``ConfigDecoder/resolveApps(_:owner:aliases:_:)`` resolves it: names replaced
    /// by their IDs, a name whose ID an earlier name already gave left out, a string with '.' an ID as
    /// written. An unknown name is a finding, so the tree's way takes it; so does a list long enough for that
    /// path's table.
    private mutating func apps(_ path: JSONPath?) throws(Declined) -> [Located<String>] {
        // The names before the current one, for a list of two or more (most name one app, whose name is
        // never made into a string).
        var earlierNames: [String] = []
        var firstName = (start: 0, end: 0)
        var resolved: [Located<String>] = []
        // A list of one known app without positions is the one ``AppNames`` keeps for it.
        var alone: [Located<String>]?
        try array { (decoder: inout DirectSiteDecoder, position: Int) throws(Declined) in
            if position >= 16 { throw Declined() }
            let origin = decoder.origin(path?.index(position))
            decoder.skipWhitespace()
            let (start, end) = try decoder.stringBounds()
            let text = UnsafeBufferPointer(rebasing: decoder.bytes[start..<end])
            if position == 0 { firstName = (start, end) }
            if position == 1 {
                earlierNames.append(
                    String(decoding: UnsafeBufferPointer(rebasing: decoder.bytes[firstName.start..<firstName.end]), as: UTF8.self)
                )
                if let first = alone {
                    resolved = first
                    alone = nil
                }
            }
            let name = position > 0 ? String(decoding: text, as: UTF8.self) : nil
            defer { if let name { earlierNames.append(name) } }
            if let (id, shared) = decoder.names.id(named: text) {
                if let name, let first = ConfigDecoder.firstName(giving: id, among: earlierNames, aliases: decoder.names.table),
                    first != name
                {
                    return
                }
                if position == 0, path == nil, let shared {
                    alone = shared
                    return
                }
                resolved.append(Located(id, origin))
            } else if text.contains(UInt8(ascii: ".")) {
                resolved.append(Located(name ?? String(decoding: text, as: UTF8.self), origin))
            } else {
                throw Declined()
            }
        }
        return alone ?? resolved
    }

    /// A component, read in place at the end of `components`: returning it cost a copy of a dozen
    /// references and the original's release.
    private mutating func component(_ path: JSONPath?, into components: inout [Component]) throws(Declined) {
        // A served site keeps no rules of its own (its document holds them): room for four at the first
        // instead of growing the array at the first, second and third.
        if components.isEmpty && origins == .siteAndHosts { components.reserveCapacity(4) }
        components.append(Component(origin: origin(path)))
        let last = components.count - 1
        try object(keys: Self.componentKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            switch key {
            case 0: components[last].path = try decoder.string()
            case 1: components[last].query = try decoder.query(path?.key("?"))
            case 2: components[last].fragment = try decoder.string()
            case 3: components[last].exclude = try decoder.bool()
            case 4: components[last].comment = try decoder.string()
            case 5: components[last].options.caseSensitive = try decoder.bool()
            default: components[last].options.percentEncoded = try decoder.bool()
            }
        }
    }

    private mutating func query(_ path: JSONPath?) throws(Declined) -> QueryPattern {
        skipWhitespace()
        guard index < bytes.count else { throw Declined() }
        if bytes[index] == UInt8(ascii: "\"") { return .whole(try string()) }
        guard bytes[index] == UInt8(ascii: "{") else { throw Declined() }
        index += 1
        var patterns: [QueryItemPattern] = []
        skipWhitespace()
        if try consume(UInt8(ascii: "}")) { return .items(patterns) }
        while true {
            skipWhitespace()
            let nameLocation = location()
            let name = try string()
            // Looking back for a duplicate name suits the one to three items a rule has; a long list goes to
            // the tree's parser, which keeps a table for it.
            if patterns.count >= 16 || patterns.contains(where: { $0.name == name }) { throw Declined() }
            try colon()
            let origin = path.map { Provenance(nameLocation, $0.key(name)) } ?? .none
            patterns.append(QueryItemPattern(name: name, pattern: try string(), origin: origin))
            if try closes(UInt8(ascii: "}")) { return .items(patterns) }
        }
    }

    // MARK: - JSON, the part of it this reader takes

    /// An object whose keys are all among `keys`, each at most once; `member` reads the value of the key
    /// at that position in `keys`.
    private mutating func object(
        keys: KeySet,
        _ member: (inout DirectSiteDecoder, Int) throws(Declined) -> Void
    ) throws(Declined) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw Declined() }
        index += 1
        skipWhitespace()
        if try consume(UInt8(ascii: "}")) { return }
        var seen: UInt32 = 0
        while true {
            skipWhitespace()
            let key = try knownKey(keys)
            guard seen & (1 << key) == 0 else { throw Declined() }
            seen |= 1 << key
            try colon()
            try member(&self, key)
            if try closes(UInt8(ascii: "}")) { return }
        }
    }

    /// An array; `item` reads the item at each position.
    private mutating func array(_ item: (inout DirectSiteDecoder, Int) throws(Declined) -> Void) throws(Declined) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { throw Declined() }
        index += 1
        skipWhitespace()
        if try consume(UInt8(ascii: "]")) { return }
        var position = 0
        while true {
            skipWhitespace()
            try item(&self, position)
            position += 1
            if try closes(UInt8(ascii: "]")) { return }
        }
    }

    /// After a value: a comma (false) or `closer` (true).
    private mutating func closes(_ closer: UInt8) throws(Declined) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw Declined() }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        guard bytes[index] == closer else { throw Declined() }
        index += 1
        return true
    }

    private mutating func consume(_ byte: UInt8) throws(Declined) -> Bool {
        guard index < bytes.count else { throw Declined() }
        guard bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// The colon after a key, and the whitespace around it: a value's position is its first byte.
    private mutating func colon() throws(Declined) {
        skipWhitespace()
        guard try consume(UInt8(ascii: ":")) else { throw Declined() }
        skipWhitespace()
    }

    /// Which of `keys` the key at `index` is. Each is compared with the bytes after the quote, closing quote
    /// included, without finding the key's end first: a key with an escape or any other byte matches none,
    /// as when it was read as a string first.
    private mutating func knownKey(_ keys: KeySet) throws(Declined) -> Int {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Declined() }
        let start = index + 1
        let available = bytes.count - start
        if available >= 8, let base = bytes.baseAddress {
            // Little-endian, as the words were made: the first byte after the quote is the lowest.
            let written = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            for position in keys.keys.indices {
                let key = keys.keys[position]
                guard written & key.mask == key.word else { continue }
                let length = key.text.utf8CodeUnitCount
                // Longer than seven bytes: the rest, and the closing quote, read after the word.
                if length >= 8 {
                    guard length < available, bytes[start + length] == UInt8(ascii: "\""), equal(key.text, at: start) else { continue }
                }
                index = start + length + 1
                return position
            }
            throw Declined()
        }
        for position in keys.keys.indices {
            let key = keys.keys[position].text
            let length = key.utf8CodeUnitCount
            guard length < available, bytes[start] == key.utf8Start[0], bytes[start + length] == UInt8(ascii: "\""),
                equal(key, at: start)
            else { continue }
            index = start + length + 1
            return position
        }
        throw Declined()
    }

    /// A string of printable ASCII without escapes; anything else is the tree's.
    private mutating func string() throws(Declined) -> String {
        skipWhitespace()
        let (start, end) = try stringBounds()
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    private mutating func stringBounds() throws(Declined) -> (Int, Int) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Declined() }
        let start = index + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                index = end + 1
                return (start, end)
            }
            if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\\") { break }
            end += 1
        }
        throw Declined()
    }

    private mutating func bool() throws(Declined) -> Bool {
        skipWhitespace()
        if matches("true") {
            index += 4
            return true
        }
        if matches("false") {
            index += 5
            return false
        }
        throw Declined()
    }

    private func matches(_ word: StaticString) -> Bool {
        bytes.count - index >= word.utf8CodeUnitCount && equal(word, at: index)
    }

    private func equal(_ word: StaticString, at offset: Int) -> Bool {
        let text = word.utf8Start
        for position in 0..<word.utf8CodeUnitCount where bytes[offset + position] != text[position] { return false }
        return true
    }

    /// Inlined for its common case, no whitespace at all (a generated file's compact JSON).
    @inline(__always)
    private mutating func skipWhitespace() {
        if index < bytes.count, bytes[index] > 0x20 { return }
        skipWhitespaceRun()
    }

    private mutating func skipWhitespaceRun() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                line += 1
                index += 1
                lineStart = index
            default: return
            }
        }
    }

    /// Where the value at `index` was written, when its path is kept.
    private func origin(_ path: JSONPath?) -> Provenance {
        guard let path else { return .none }
        return Provenance(location(), path)
    }

    private func location() -> SourceLocation {
        let column = line == firstLine ? index + firstLineColumnBase : index - lineStart + 1
        return SourceLocation(offset: index, line: line, column: column)
    }
}
