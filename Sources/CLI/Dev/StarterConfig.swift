import AASA

/// The config `dev` writes when given none. It is the user's from then on: `dev` only ever changes the
/// one app ID in it, and only when `--app` asks for a different one.
enum StarterConfig {
    /// The app ID written when `--app` is not given: well-formed, so everything else can be tried, and an
    /// `appid.placeholder` error everywhere but `dev`, so it never passes CI.
    static let placeholderApp = AASAValidator.placeholderTeamID + ".com.example.your-app"

    static func text(hosts: [String], app: String) -> String {
        let hostList = hosts.map { JSONText.quoted($0) }.joined(separator: ", ")
        return """
            {
              "version": 1,
              "comment": "Written by `aasa-server dev`; edit freely: it is never overwritten (dev --app changes only apps.app).",
              "apps": { "app": \(JSONText.quoted(app)) },
              "sites": [
                {
                  "hosts": [\(hostList)],
                  "applinks": {
                    "details": [
                      { "apps": ["app"], "components": [
                        { "#": "no_universal_links", "exclude": true, "comment": "a link that opts out" },
                        { "/": "/*", "comment": "everything else opens the app" }
                      ] }
                    ]
                  },
                  "webcredentials": { "apps": ["app"] }
                }
              ]
            }

            """
    }

    /// The app ID at `apps.app` and where its string literal is in `bytes`; nil when the file is not
    /// JSON or no longer has `"apps": {"app": "…"}`.
    static func app(in bytes: [UInt8]) -> (value: String, literal: Range<Int>)? {
        guard let root = JSONParser.parse(bytes).root, let node = root["apps"]?["app"], let value = node.stringValue else {
            return nil
        }
        let start = node.location.offset
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return (value, start..<(index + 1))
            default: index += 1
            }
        }
        return nil
    }

    /// What `--app` does to an existing starter config.
    enum AppUpdate: Equatable {
        case unchanged
        /// The new bytes: the old ones with only the app ID's literal replaced.
        case updated(from: String, bytes: [UInt8])
        /// The file no longer has `apps.app` (or is not JSON): it is left alone.
        case notApplicable
    }

    static func updatingApp(in bytes: [UInt8], to app: String) -> AppUpdate {
        guard let current = self.app(in: bytes) else { return .notApplicable }
        if current.value == app { return .unchanged }
        var updated = bytes
        updated.replaceSubrange(current.literal, with: Array(JSONText.quoted(app).utf8))
        return .updated(from: current.value, bytes: updated)
    }
}
