/// What the direct decoders read alike: an AASA component (a config's site writes the same), and where a
/// value was written.
extension DirectJSONDecoding {
    private typealias Declined = DirectJSONReader.Declined

    /// Where the value at the reader's position was written, when its path is kept.
    func origin(_ path: JSONPath?) -> Provenance {
        guard let path else { return .none }
        return Provenance(reader.location(), path)
    }

    /// A component, read in place at the end of `components`: returning it cost a copy of a dozen
    /// references and the original's release. `reserving`: room for four at the first instead of growing
    /// the array at the first, second and third (a served site, which keeps no rules of its own).
    mutating func component(
        _ path: JSONPath?,
        into components: inout [Component],
        reserving: Bool = false
    ) throws(DirectJSONReader.Declined) {
        if components.isEmpty && reserving { components.reserveCapacity(4) }
        components.append(Component(origin: origin(path)))
        let last = components.count - 1
        try object(keys: directComponentKeys) { (decoder: inout Self, key: Int) throws(Declined) in
            switch key {
            case 0: components[last].path = try decoder.reader.string()
            case 1: components[last].query = try decoder.query(path?.key("?"))
            case 2: components[last].fragment = try decoder.reader.string()
            case 3: components[last].exclude = try decoder.reader.bool()
            case 4: components[last].comment = try decoder.reader.string()
            case 5: components[last].options.caseSensitive = try decoder.reader.bool()
            default: components[last].options.percentEncoded = try decoder.reader.bool()
            }
        }
    }

    private mutating func query(_ path: JSONPath?) throws(DirectJSONReader.Declined) -> QueryPattern {
        reader.skipWhitespace()
        guard reader.index < reader.bytes.count else { throw Declined() }
        if reader.bytes[reader.index] == UInt8(ascii: "\"") { return .whole(try reader.string()) }
        var patterns: [QueryItemPattern] = []
        if try reader.opens(UInt8(ascii: "{"), closedBy: UInt8(ascii: "}")) { return .items(patterns) }
        while true {
            reader.skipWhitespace()
            let nameLocation = reader.location()
            let name = try reader.string()
            // Looking back for a duplicate name suits the one to three items a rule has; a long list goes to
            // the tree's parser, which keeps a table for it.
            if patterns.count >= 16 || patterns.contains(where: { $0.name == name }) { throw Declined() }
            try reader.colon()
            let origin = path.map { Provenance(nameLocation, $0.key(name)) } ?? .none
            patterns.append(QueryItemPattern(name: name, pattern: try reader.string(), origin: origin))
            if try reader.closes(UInt8(ascii: "}")) { return .items(patterns) }
        }
    }
}

/// A component's keys, in the order ``DirectJSONDecoding/component(_:into:reserving:)`` reads them.
private let directComponentKeys = DirectJSONReader.KeySet(["/", "?", "#", "exclude", "comment", "caseSensitive", "percentEncoded"])
