import AASA

/// The config used when none is given: config/example.json, compiled in by the BuildInfo plugin, so an
/// installed binary serves in any directory and the file in the repository stays the only copy.
enum BuiltInConfig {
    /// How messages name it: it has no path.
    static let name = "(built-in example config)"
    static var bytes: [UInt8] { Array(builtInConfigText.utf8) }

    /// What it serves, for the line that says so.
    static var hosts: [String] {
        guard let root = JSONParser.parse(bytes).root, let sites = root["sites"]?.arrayValue else { return [] }
        return sites.flatMap { site in (site["hosts"]?.arrayValue ?? []).compactMap(\.stringValue) }
    }
}
