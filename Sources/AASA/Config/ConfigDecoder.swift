/// Turns config JSON into a ``Config``, reporting every problem with its line:column and JSON path.
///
/// Every object rejects unknown keys with the closest valid key suggested: a typo in a hand-edited
/// config must never silently change what is served.
public enum ConfigDecoder {
    static let rootKeys = ["$schema", "version", "apps", "sites", "unknownHost", "server", "comment"]
    static let siteKeys = ["hosts", "applinks", "webcredentials", "appclips", "activitycontinuation", "file", "comment"]
    static let applinksKeys = ["formats", "defaults", "substitutionVariables", "details", "comment"]
    static let detailsKeys = ["apps", "components", "defaults", "comment"]
    static let serviceKeys = ["apps", "comment"]

    public struct Result: Sendable {
        public var config: Config?
        public var diagnostics: [Diagnostic]
    }

    public static func decode(_ bytes: [UInt8]) -> Result {
        let parsed = JSONParser.parse(bytes, duplicateKeys: .error)
        guard let root = parsed.root else { return Result(config: nil, diagnostics: parsed.diagnostics) }
        var reader = NodeReader()
        let config = decode(root, &reader)
        return Result(config: config, diagnostics: parsed.diagnostics + reader.findings)
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
        -> (config: Config, aliases: [String: String], siteNodes: [JSONNode])?
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

        var aliases: [String: String] = [:]
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
                guard let id = reader.string(member.value, path) else { continue }
                aliases[member.key] = id.value
                config.apps.append((member.key, id))
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

        guard let sitesNode = root["sites"] else {
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
        if siteNodes.isEmpty {
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

    static func decodeSite(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: [String: String],
        _ reader: inout NodeReader
    )
        -> Site?
    {
        guard let members = reader.object(node, path, what: "a site object such as {\"hosts\": [\"example.com\"], ...}")
        else { return nil }
        reader.checkKeys(members, path, known: siteKeys, context: "site")
        var hosts: [Located<HostPattern>] = []
        if let hostsNode = node["hosts"] {
            for host in reader.stringArray(hostsNode, path.key("hosts"), hint: "write [\"example.com\"]") ?? [] {
                switch HostPattern.parse(host.value) {
                case .success(let pattern): hosts.append(Located(pattern, host.origin))
                case .failure(let error):
                    reader.report(.error, "host.invalid", error.message, host.origin.location, host.origin.path)
                }
            }
            if hostsNode.arrayValue?.isEmpty == true {
                reader.report(
                    .error,
                    "site.hosts-missing",
                    "\"hosts\" is empty; list at least one host",
                    hostsNode.location,
                    path.key("hosts")
                )
            }
        } else {
            reader.report(.error, "site.hosts-missing", "this site has no \"hosts\"; list the host names it serves", node.location, path)
        }

        let generatedKeys = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
        let presentGenerated = members.filter { generatedKeys.contains($0.key) }
        if let fileNode = node["file"] {
            if !presentGenerated.isEmpty {
                reader.report(
                    .error,
                    "site.source",
                    "a site either hosts a verbatim \"file\" or generates its document from "
                        + presentGenerated.map { "\"\($0.key)\"" }.joined(separator: ", ") + " — not both. Remove one",
                    node.location,
                    path
                )
            }
            guard let file = reader.string(fileNode, path.key("file")) else { return nil }
            if file.value.isEmpty {
                reader.report(.error, "site.source", "\"file\" is empty; give the AASA file's path", fileNode.location, path.key("file"))
                return nil
            }
            return Site(hosts: hosts, source: .file(file), origin: Origin(node.location, path))
        }
        if presentGenerated.isEmpty {
            reader.report(
                .error,
                "site.source",
                "this site serves nothing: add \"applinks\" (and/or \"webcredentials\", \"appclips\", "
                    + "\"activitycontinuation\"), or \"file\" with a verbatim AASA file",
                node.location,
                path
            )
        }
        var generated = GeneratedSite()
        for member in presentGenerated {
            let memberPath = path.key(member.key)
            switch member.key {
            case "applinks": generated.applinks = decodeAppLinks(member.value, memberPath, aliases: aliases, &reader)
            case "webcredentials":
                generated.webcredentials = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.webcredentialsOrigin = Origin(member.value.location, memberPath)
            case "appclips":
                generated.appclips = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.appclipsOrigin = Origin(member.value.location, memberPath)
            case "activitycontinuation":
                generated.activitycontinuation = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.activitycontinuationOrigin = Origin(member.value.location, memberPath)
            default: break
            }
        }
        return Site(hosts: hosts, source: .generated(generated), origin: Origin(node.location, path))
    }

    static func decodeService(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: [String: String],
        _ reader: inout NodeReader
    )
        -> [Located<String>]?
    {
        guard let members = reader.object(node, path, what: "an object such as {\"apps\": [\"shop\"]}") else { return nil }
        reader.checkKeys(members, path, known: serviceKeys, context: path.lastComponentDescription)
        guard let appsNode = node["apps"] else {
            reader.report(
                .error,
                "service.apps-missing",
                "\(path.lastComponentDescription) needs \"apps\": a list of app names or IDs",
                node.location,
                path
            )
            return nil
        }
        return resolveApps(appsNode, owner: path, aliases: aliases, &reader)
    }

    /// Replaces app names by their IDs; a string containing '.' is taken as a literal app ID.
    static func resolveApps(
        _ node: JSONNode,
        owner: JSONPath,
        aliases: [String: String],
        _ reader: inout NodeReader
    )
        -> [Located<String>]
    {
        let path = owner.key("apps")
        var resolved: [Located<String>] = []
        for reference in reader.stringArray(node, path) ?? [] {
            if let id = aliases[reference.value] {
                resolved.append(Located(id, reference.origin))
            } else if reference.value.utf8.contains(UInt8(ascii: ".")) {
                resolved.append(reference)
            } else {
                let suggestion = closestMatch(to: reference.value, in: Array(aliases.keys).sorted())
                reader.report(
                    .error,
                    "app.unknown",
                    "no app named \"\(reference.value)\" in \"apps\""
                        + (suggestion.map { "; did you mean \"\($0)\"?" }
                            ?? "; define it under the top-level \"apps\" or write the full TEAMID.bundle.id"),
                    reference.origin.location,
                    reference.origin.path,
                    absentKey: AbsentKey(object: owner.description, key: "apps")
                )
            }
        }
        return resolved
    }

    static func decodeAppLinks(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: [String: String],
        _ reader: inout NodeReader
    )
        -> AppLinksConfig?
    {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: applinksKeys, context: "applinks")
        var applinks = AppLinksConfig(origin: Origin(node.location, path))
        for member in members {
            let memberPath = path.key(member.key)
            switch member.key {
            case "formats":
                var formats: [AppLinksFormat] = []
                for item in reader.stringArray(member.value, memberPath, hint: "write [\"modern\"], [\"legacy\"] or both") ?? [] {
                    if let format = AppLinksFormat(rawValue: item.value) {
                        if !formats.contains(format) { formats.append(format) }
                    } else {
                        let suggestion = closestMatch(to: item.value, in: AppLinksFormat.allCases.map(\.rawValue))
                        reader.report(
                            .error,
                            "applinks.format",
                            "unknown format \"\(item.value)\"; use \"modern\" (appIDs + components, iOS 13+) and/or "
                                + "\"legacy\" (appID + paths, iOS 12)" + (suggestion.map { " — did you mean \"\($0)\"?" } ?? ""),
                            item.origin.location,
                            item.origin.path
                        )
                    }
                }
                if member.value.arrayValue?.isEmpty == true {
                    reader.report(
                        .error,
                        "applinks.format",
                        "\"formats\" is empty; name at least one of \"modern\", \"legacy\"",
                        member.value.location,
                        memberPath
                    )
                }
                applinks.formats = formats.isEmpty ? [.modern] : formats
            case "defaults":
                applinks.defaults = AASADecoder.decodeDefaults(member.value, memberPath, &reader)
            case "substitutionVariables":
                applinks.substitutionVariables = AASADecoder.decodeVariables(member.value, memberPath, &reader)
            case "details":
                guard let items = member.value.arrayValue else {
                    reader.typeMismatch(member.value, memberPath, expected: "an array of {\"apps\", \"components\"} objects")
                    continue
                }
                for (index, item) in items.enumerated() {
                    if let details = decodeDetails(item, memberPath.index(index), aliases: aliases, &reader) {
                        applinks.details.append(details)
                    }
                }
            default: break
            }
        }
        if node["details"] == nil {
            reader.report(
                .error,
                "applinks.details-missing",
                "\"applinks\" needs \"details\": [{\"apps\": [...], \"components\": [...]}]",
                node.location,
                path
            )
        }
        return applinks
    }

    static func decodeDetails(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: [String: String],
        _ reader: inout NodeReader
    )
        -> DetailsConfig?
    {
        guard let members = reader.object(node, path) else { return nil }
        for member in members where !detailsKeys.contains(member.key) {
            let memberPath = path.key(member.key)
            switch member.key {
            case "appID", "appIDs":
                reader.report(
                    .error,
                    "key.unknown",
                    "in the config, a details entry lists its apps under \"apps\" (names from the top-level \"apps\" "
                        + "or full IDs); the generator writes \"\(member.key)\" for you",
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: "apps")
                )
            case "paths":
                reader.report(
                    .error,
                    "key.unknown",
                    "in the config, rules are written as \"components\"; legacy \"paths\" are generated from them when "
                        + "\"formats\" includes \"legacy\"",
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: "components")
                )
            default:
                reader.checkKeys([member], path, known: detailsKeys, context: "details entry")
            }
        }
        var details = DetailsConfig(apps: [], components: [], origin: Origin(node.location, path))
        if let appsNode = node["apps"] {
            details.apps = resolveApps(appsNode, owner: path, aliases: aliases, &reader)
        } else {
            reader.report(
                .error,
                "details.no-app",
                "this entry has no \"apps\"; name the apps its components apply to",
                node.location,
                path
            )
        }
        if let componentsNode = node["components"] {
            if let items = componentsNode.arrayValue {
                details.components = items.enumerated().compactMap { index, item in
                    AASADecoder.decodeComponent(item, path.key("components").index(index), &reader)
                }
            } else {
                reader.typeMismatch(componentsNode, path.key("components"), expected: "an array of component objects")
            }
        } else {
            reader.report(.error, "details.no-rules", "this entry has no \"components\"; add e.g. [{\"/\": \"/*\"}]", node.location, path)
        }
        if let defaults = node["defaults"] {
            details.defaults = AASADecoder.decodeDefaults(defaults, path.key("defaults"), &reader)
        }
        return details
    }
}
