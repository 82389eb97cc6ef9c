/// Turns config JSON into a ``Config``, reporting every problem with its line:column and JSON path.
///
/// Every object rejects unknown keys with the closest valid key suggested: a typo in a hand-edited
/// config must never silently change what is served.
public enum ConfigDecoder {
    static let rootKeys = ["$schema", "version", "apps", "sites", "include", "unknownHost", "server", "comment"]
    static let siteKeys = [
        "hosts", "applinks", "webcredentials", "appclips", "activitycontinuation", "file", "android", "assetlinksFile", "links", "comment",
    ]
    static let appEntryKeys = ["apple", "android", "appStoreID", "name", "icon", "comment"]
    static let androidKeys = ["package", "sha256", "relations", "app", "comment"]
    static let applinksKeys = ["formats", "defaults", "substitutionVariables", "details", "comment"]
    static let detailsKeys = ["apps", "components", "defaults", "comment"]
    static let serviceKeys = ["apps", "comment"]

    public struct Result: Sendable {
        public var config: Config?
        public var diagnostics: [Diagnostic]
    }

    public static func decode(_ bytes: [UInt8]) -> Result {
        let parsed = JSONParser.parse(bytes, duplicateKeys: .error)
        guard let root = parsed.root else { return Result(config: nil, diagnostics: forConfig(parsed.diagnostics)) }
        var reader = NodeReader()
        let config = decode(root, &reader)
        return Result(config: config, diagnostics: parsed.diagnostics + reader.findings)
    }

    /// The parser speaks of AASA documents; an empty config is told what a config looks like.
    static func forConfig(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.map { finding in
            guard finding.rule == "json.empty" else { return finding }
            var told = finding
            told.message =
                "the config file is empty; a config is a JSON object such as "
                + "{\"version\": 1, \"sites\": [{\"hosts\": [\"example.com\"], \"applinks\": {\"details\": [...]}}]}"
            return told
        }
    }

    static func decode(_ root: JSONNode, _ reader: inout NodeReader) -> Config? {
        guard var decoded = decodeRoot(root, &reader) else { return nil }
        for (index, node) in decoded.siteNodes.enumerated() {
            if let site = decodeSite(node, sitesPath.index(index), aliases: decoded.aliases, &reader) {
                decoded.config.sites.append(site)
            }
        }
        return decoded.config
    }

    static let sitesPath = JSONPath.root.key("sites")

    /// The config without its sites, and the site nodes, each of which decodes on its own
    /// (``decodeSite(_:_:aliases:_:)``), in any order or in parallel.
    static func decodeRoot(
        _ root: JSONNode,
        _ reader: inout NodeReader
    )
        -> (config: Config, aliases: AppTable, siteNodes: [JSONNode])?
    {
        guard let members = root.objectValue else {
            reader.report(
                .error,
                "json.root-not-object",
                "the config must be a JSON object such as {\"version\": 1, \"sites\": [...]}, found \(root.typeName)",
                root.location,
                .root
            )
            return nil
        }
        reader.checkKeys(members, .root, known: rootKeys, context: "config")
        var config = Config()
        if let version = root["version"] {
            if case .number(let text) = version.value, text == "1" {
                config.version = 1
            } else {
                reader.report(
                    .error,
                    "config.version",
                    "\"version\" must be 1 (the only config format this aasa-server understands)",
                    version.location,
                    JSONPath.root.key("version")
                )
            }
        } else {
            reader.report(
                .warning,
                "config.version",
                "add \"version\": 1 at the top so future formats can be told apart",
                root.location,
                .root
            )
        }

        var aliases = AppTable()
        if let appsNode = root["apps"],
            let appMembers = reader.object(
                appsNode,
                JSONPath.root.key("apps"),
                what: "an object of named app IDs such as {\"shop\": \"ABCDE12345.com.example.shop\"}"
            )
        {
            for member in appMembers {
                let path = JSONPath.root.key("apps").key(member.key)
                if member.key.isEmpty || member.key.contains(".") {
                    reader.report(
                        .error,
                        "app.name",
                        "app name \"\(member.key)\" must be non-empty and contain no '.', so it cannot be mistaken "
                            + "for an app ID",
                        member.keyLocation,
                        path
                    )
                    continue
                }
                // "shop": "TEAMID.bundle", or {"apple": "TEAMID.bundle", "android": {"package": …, "sha256": […]}}.
                if let entry = member.value.objectValue {
                    reader.checkKeys(entry, path, known: appEntryKeys, context: "app")
                    if let appleNode = member.value["apple"], let id = reader.string(appleNode, path.key("apple")) {
                        aliases.apple[member.key] = id.value
                        config.apps.append((member.key, id))
                    }
                    if let androidNode = member.value["android"],
                        let app = decodeAndroidApp(androidNode, path.key("android"), aliases: AppTable(), allowReference: false, &reader)
                    {
                        aliases.android[member.key] = app
                    }
                    if let listing = decodeListing(member.value, path, &reader) { aliases.listings[member.key] = listing }
                    if member.value["apple"] == nil && member.value["android"] == nil {
                        reader.report(
                            .error,
                            "app.name",
                            "app \"\(member.key)\" defines neither \"apple\" (TEAMID.bundle.id) nor \"android\" "
                                + "({\"package\": …, \"sha256\": […]})",
                            member.value.location,
                            path
                        )
                    }
                    continue
                }
                guard let id = reader.string(member.value, path, hint: "or an object with \"apple\" and/or \"android\"") else { continue }
                aliases.apple[member.key] = id.value
                config.apps.append((member.key, id))
            }
            // A copy-paste slip gives two names one app: each name is meant to be an app of its own.
            var firstName: [String: String] = [:]
            for (name, id) in config.apps {
                guard let earlier = firstName[id.value.lowercased()] else {
                    firstName[id.value.lowercased()] = name
                    continue
                }
                reader.report(
                    .warning,
                    "app.duplicate-id",
                    "apps \"\(earlier)\" and \"\(name)\" are the same app ID \(id.value); if \"\(name)\" is another app, give it its own "
                        + "ID (its bundle ID differs), else remove it — the ID is listed once wherever both are named",
                    id.origin.location,
                    id.origin.path
                )
            }
        }

        if let unknown = root["unknownHost"] {
            let path = JSONPath.root.key("unknownHost")
            if let text = unknown.stringValue, let policy = UnknownHostPolicy(rawValue: text) {
                config.unknownHost = policy
            } else if case .number(let text) = unknown.value, text == "404" {
                config.unknownHost = .notFound
            } else {
                let written = unknown.stringValue ?? unknown.typeName
                let choices = UnknownHostPolicy.allCases.map(\.rawValue)
                let suggestion = unknown.stringValue.flatMap { closestMatch(to: $0, in: choices) }
                reader.report(
                    .error,
                    "config.unknown-host",
                    "\"unknownHost\" is \(written.debugDescription); it must be \"empty\" (200 with a document that "
                        + "associates no app) or \"404\"" + (suggestion.map { " — did you mean \"\($0)\"?" } ?? ""),
                    unknown.location,
                    path
                )
            }
        }

        if let server = root["server"] {
            config.server = decodeServer(server, JSONPath.root.key("server"), &reader)
        }
        config.appTable = aliases
        if let includeNode = root["include"] {
            let path = JSONPath.root.key("include")
            let patterns = reader.stringArray(includeNode, path, hint: "write [\"sites.d/*.json\"]") ?? []
            for pattern in patterns where pattern.value.isEmpty || pattern.value.hasSuffix("/") {
                reader.report(
                    .error,
                    "include.pattern",
                    "\"\(pattern.value)\" names no file; write a file or a pattern such as \"sites.d/*.json\"",
                    pattern.origin.location,
                    pattern.origin.path
                )
            }
            config.includes = patterns.filter { !$0.value.isEmpty && !$0.value.hasSuffix("/") }
        }

        guard let sitesNode = root["sites"] else {
            // Every site may live in included files.
            if !config.includes.isEmpty { return (config, aliases, []) }
            // A misspelt "sites" is one finding: its key.unknown already suggests the right name.
            if case .object(let members) = root.value, members.contains(where: { closestMatch(to: $0.key, in: ["sites"]) == "sites" }) {
                return (config, aliases, [])
            }
            reader.report(
                .error,
                "config.sites-missing",
                "the config has no \"sites\" array, so no host would be served; add \"sites\": [{\"hosts\": [...], ...}]",
                root.location,
                .root
            )
            return (config, aliases, [])
        }
        guard let siteNodes = sitesNode.arrayValue else {
            reader.typeMismatch(sitesNode, sitesPath, expected: "an array of site objects")
            return (config, aliases, [])
        }
        // With included files the sites are there; whether any file holds one is include.empty's to say.
        if siteNodes.isEmpty && config.includes.isEmpty {
            reader.report(
                .warning,
                "config.no-sites",
                "\"sites\" is empty: every host gets the unknownHost answer",
                sitesNode.location,
                sitesPath
            )
        }
        config.sites.reserveCapacity(siteNodes.count)
        return (config, aliases, siteNodes)
    }
}
