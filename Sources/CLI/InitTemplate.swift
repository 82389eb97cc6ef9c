import AASA

/// The commented starter config `aasa-server init` writes: pure text from the answers its flags gave.
/// JSON has no comments, so the notes are `comment` members, which the server reads past.
struct InitTemplate: Equatable {
    struct App: Equatable {
        var name: String
        var id: String
    }

    var hosts: [String]
    var apps: [App]
    /// The paths that open the app, in AASA component syntax (`/product/*`).
    var paths: [String]
    /// Paths that never open the app, checked first.
    var excluded: [String]
    var webCredentials: Bool

    /// `NAME=TEAMID.BUNDLE` or a bare `TEAMID.BUNDLE` (named after its bundle's last part); nil when the
    /// text has no app ID in it.
    static func app(_ text: String) -> App? {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            guard !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            return App(name: parts[0], id: parts[1])
        }
        guard let id = parts.first, id.contains(".") else { return nil }
        let last = id.split(separator: ".").last.map(String.init) ?? "app"
        return App(name: last.isEmpty ? "app" : last, id: id)
    }

    var text: String {
        var names = Set<String>()
        // Two apps whose bundles end alike get distinct names.
        let named = apps.map { app -> App in
            var name = app.name
            var suffix = 2
            while !names.insert(name).inserted {
                name = "\(app.name)\(suffix)"
                suffix += 1
            }
            return App(name: name, id: app.id)
        }
        let appMembers = named.map { "    \(JSONText.quoted($0.name)): \(JSONText.quoted($0.id))" }.joined(separator: ",\n")
        let appNames = named.map { JSONText.quoted($0.name) }.joined(separator: ", ")
        var components = excluded.map {
            "              { \"/\": \(JSONText.quoted($0)), \"exclude\": true, \"comment\": \"stays in the browser\" }"
        }
        components += paths.map { "              { \"/\": \(JSONText.quoted($0)), \"comment\": \"opens the app\" }" }
        let hostList = hosts.map { JSONText.quoted($0) }.joined(separator: ", ")
        let credentials = webCredentials ? ",\n      \"webcredentials\": { \"apps\": [\(appNames)] }" : ""
        return """
            {
              "version": 1,
              "comment": "Written by aasa-server init. Check it with: aasa-server validate --config FILE; try a URL with: aasa-server match --config FILE URL; serve it with: aasa-server serve --config FILE. An app ID is your Team ID, a dot and the bundle ID (Xcode: Signing & Capabilities). comment members are notes the server ignores.",
              "apps": {
            \(appMembers)
              },
              "sites": [
                {
                  "comment": "Every host serves its own file, apex and www included: each one listed here gets this document.",
                  "hosts": [\(hostList)],
                  "applinks": {
                    "details": [
                      {
                        "apps": [\(appNames)],
                        "comment": "First match wins: excluded paths before the ones that open the app.",
                        "components": [
            \(components.joined(separator: ",\n"))
                        ]
                      }
                    ]
                  }\(credentials)
                }
              ]
            }

            """
    }
}
