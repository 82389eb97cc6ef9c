/// A hosted apple-app-site-association file of the common shape, decoded straight from its bytes for a
/// serving load, which keeps only the bytes: `applinks` with `apps`, `defaults` and `details` of app IDs,
/// components and paths, and the services' app lists.
///
/// A first start with a 101 KB hosted document spent 12 M instructions parsing it into a JSON tree,
/// decoding the tree and freeing it — a quarter of the start. This reader makes the same
/// ``AASADocument`` — the same values, without positions or JSON paths (only findings read those) — and
/// the document is used only when ``AASAValidator`` finds nothing in it. It takes nothing on trust:
/// anything ``AASADecoder`` would say something about — another key, `substitutionVariables`, an escape or a
/// non-ASCII byte, a number or null, a duplicate key, a value of another type, a byte order mark, anything
/// after the object — makes it return nil, and so does any finding of the check: the file then goes the
/// tree's way, and every finding is reported with its line, column and path.
package struct DirectAASADecoder: DirectJSONDecoding {
    var reader: DirectJSONReader

    private typealias Declined = DirectJSONReader.Declined
    private typealias KeySet = DirectJSONReader.KeySet

    /// The document `bytes` hold when it is of the common shape and checked without a finding; nil sends it
    /// the tree's way.
    package static func checked(_ bytes: [UInt8]) -> AASADocument? {
        guard let document = bytes.withUnsafeBufferPointer({ decode($0) }), AASAValidator.validate(document).isEmpty,
            AASAValidator.validateSize(bytes.count, of: document).isEmpty
        else { return nil }
        return document
    }

    /// The document `bytes` hold, without positions; nil when the tree must decide.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> AASADocument? {
        var decoder = DirectAASADecoder(reader: DirectJSONReader(bytes, at: SourceLocation(offset: 0, line: 1, column: 1), lineStart: 0))
        do throws(Declined) {
            let document = try decoder.document()
            decoder.reader.skipWhitespace()
            return decoder.reader.index == bytes.count ? document : nil
        } catch {
            return nil
        }
    }

    private static let rootKeys = KeySet(["applinks", "webcredentials", "appclips", "activitycontinuation"])
    private static let applinksKeys = KeySet(["apps", "details", "defaults"])
    private static let detailsKeys = KeySet(["appID", "appIDs", "components", "paths", "defaults"])
    private static let serviceKeys = KeySet(["apps"])
    private static let optionKeys = KeySet(["caseSensitive", "percentEncoded"])

    private mutating func document() throws(Declined) -> AASADocument {
        var document = AASADocument()
        try object(keys: Self.rootKeys) { (decoder: inout DirectAASADecoder, key: Int) throws(Declined) in
            switch key {
            case 0: document.applinks = try decoder.applinks()
            case 1: document.webcredentials = try decoder.service()
            case 2: document.appclips = try decoder.service()
            default: document.activitycontinuation = try decoder.service()
            }
        }
        return document
    }

    private mutating func applinks() throws(Declined) -> AppLinks {
        var applinks = AppLinks(details: [])
        var sawDetails = false
        try object(keys: Self.applinksKeys) { (decoder: inout DirectAASADecoder, key: Int) throws(Declined) in
            switch key {
            case 0: applinks.apps = try decoder.strings()
            case 1:
                sawDetails = true
                try decoder.array { (decoder: inout DirectAASADecoder, _: Int) throws(Declined) in
                    applinks.details.append(try decoder.details())
                }
            default:
                applinks.defaults = try decoder.options()
                applinks.defaultsOrigin = Provenance.none
            }
        }
        // Without details no URL opens an app: a finding, which the tree's way reports.
        guard sawDetails else { throw Declined() }
        return applinks
    }

    private mutating func details() throws(Declined) -> AppLinksDetails {
        var details = AppLinksDetails()
        try object(keys: Self.detailsKeys) { (decoder: inout DirectAASADecoder, key: Int) throws(Declined) in
            switch key {
            case 0: details.appID = Located(try decoder.reader.string())
            case 1: details.appIDs = try decoder.strings()
            case 2:
                var components: [Component] = []
                try decoder.array { (decoder: inout DirectAASADecoder, _: Int) throws(Declined) in
                    try decoder.component(nil, into: &components)
                }
                details.components = components
            case 3: details.paths = try decoder.strings()
            default: details.defaults = try decoder.options()
            }
        }
        return details
    }

    private mutating func service() throws(Declined) -> ServiceApps {
        var apps: [Located<String>]?
        try object(keys: Self.serviceKeys) { (decoder: inout DirectAASADecoder, _: Int) throws(Declined) in
            apps = try decoder.strings()
        }
        guard let apps else { throw Declined() }
        return ServiceApps(apps: apps)
    }

    private mutating func options() throws(Declined) -> MatchOptions {
        var options = MatchOptions()
        try object(keys: Self.optionKeys) { (decoder: inout DirectAASADecoder, key: Int) throws(Declined) in
            if key == 0 { options.caseSensitive = try decoder.reader.bool() } else { options.percentEncoded = try decoder.reader.bool() }
        }
        return options
    }

    private mutating func strings() throws(Declined) -> [Located<String>] {
        var values: [Located<String>] = []
        try array { (decoder: inout DirectAASADecoder, _: Int) throws(Declined) in
            values.append(Located(try decoder.reader.string()))
        }
        return values
    }
}
