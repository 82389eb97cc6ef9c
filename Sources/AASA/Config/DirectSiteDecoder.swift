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
struct DirectSiteDecoder: DirectJSONDecoding {
    var reader: DirectJSONReader
    private let names: AppNames
    private let origins: Origins

    private typealias Declined = DirectJSONReader.Declined
    private typealias KeySet = DirectJSONReader.KeySet

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
            return (site, JSONParser.ValueEnd(location: decoder.reader.location(), lineStart: decoder.reader.lineStart))
        } catch {
            return nil
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, at location: SourceLocation, lineStart: Int, names: AppNames, origins: Origins) {
        reader = DirectJSONReader(bytes, at: location, lineStart: lineStart)
        self.names = names
        self.origins = origins
    }

    // MARK: - The site's shape

    private static let siteKeys = KeySet(["hosts", "applinks", "webcredentials", "appclips", "activitycontinuation", "comment"])
    private static let applinksKeys = KeySet(["details", "comment"])
    private static let detailsKeys = KeySet(["apps", "components", "comment"])
    private static let serviceKeys = KeySet(["apps", "comment"])

    private mutating func site(_ sitePath: JSONPath) throws(Declined) -> Site {
        let siteLocation = reader.location()
        let path = origins == .everyValue ? sitePath : nil
        // Read into a site's host storage at the end: room for an apex and its www (and two more) at once.
        var hosts: [(pattern: HostPattern, location: SourceLocation?)] = []
        hosts.reserveCapacity(4)
        var generated = GeneratedSite()
        try object(keys: Self.siteKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            switch key {
            case 0:
                try decoder.array { (decoder: inout DirectSiteDecoder, _: Int) throws(Declined) in
                    let hostLocation = decoder.reader.location()
                    let (start, end) = try decoder.reader.stringBounds()
                    // Any other host has a finding or a form to explain: the tree's way gives it.
                    guard let pattern = HostPattern.parsePlain(UnsafeBufferPointer(rebasing: decoder.reader.bytes[start..<end])) else {
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
                _ = try decoder.reader.string()
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
                _ = try decoder.reader.string()
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
                    try decoder.component(
                        componentsPath?.index(position),
                        into: &details.components,
                        reserving: decoder.origins == .siteAndHosts
                    )
                }
            default:
                _ = try decoder.reader.string()
            }
        }
        guard sawApps, sawComponents else { throw Declined() }
        return details
    }

    private mutating func service(_ path: JSONPath?) throws(Declined) -> [Located<String>] {
        var apps: [Located<String>]?
        try object(keys: Self.serviceKeys) { (decoder: inout DirectSiteDecoder, key: Int) throws(Declined) in
            if key == 0 { apps = try decoder.apps(path?.key("apps")) } else { _ = try decoder.reader.string() }
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
            decoder.reader.skipWhitespace()
            let (start, end) = try decoder.reader.stringBounds()
            let text = UnsafeBufferPointer(rebasing: decoder.reader.bytes[start..<end])
            if position == 0 { firstName = (start, end) }
            if position == 1 {
                earlierNames.append(
                    String(decoding: UnsafeBufferPointer(rebasing: decoder.reader.bytes[firstName.start..<firstName.end]), as: UTF8.self)
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
}
