/// Turns config JSON into a ``Config``, reporting every problem with its line:column and JSON path.
///
/// Every object rejects unknown keys with the closest valid key suggested: a typo in a hand-edited
/// config must never silently change what is served.
public enum ConfigDecoder {
    static let rootKeys = ["$schema", "version", "apps", "sites", "include", "unknownHost", "server", "comment"]
    static let siteKeys = [
        "hosts", "applinks", "webcredentials", "appclips", "activitycontinuation", "file", "android", "assetlinksFile", "comment",
    ]
    static let appEntryKeys = ["apple", "android", "comment"]
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
        aliases: AppTable,
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

        let android = decodeSiteAndroid(node, path, aliases: aliases, &reader)
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
            return Site(hosts: hosts, source: .file(file), android: android, origin: Provenance(node.location, path))
        }
        // Declared Android apps make the site's purpose clear even when none of them resolved (that error is
        // reported where the name is): no second "serves nothing" finding.
        if presentGenerated.isEmpty && (android != nil || node["android"] != nil || node["assetlinksFile"] != nil) {
            // Android only: the AASA paths answer as for an unknown host.
            return Site(hosts: hosts, source: .none, android: android, origin: Provenance(node.location, path))
        }
        if presentGenerated.isEmpty {
            reader.report(
                .error,
                "site.source",
                "this site serves nothing: add \"applinks\" (and/or \"webcredentials\", \"appclips\", "
                    + "\"activitycontinuation\"), or \"file\" with a verbatim AASA file, or \"android\" / \"assetlinksFile\"",
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
                generated.webcredentialsOrigin = Provenance(member.value.location, memberPath)
            case "appclips":
                generated.appclips = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.appclipsOrigin = Provenance(member.value.location, memberPath)
            case "activitycontinuation":
                generated.activitycontinuation = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.activitycontinuationOrigin = Provenance(member.value.location, memberPath)
            default: break
            }
        }
        return Site(hosts: hosts, source: .generated(generated), android: android, origin: Provenance(node.location, path))
    }

    /// A site's `android` list or `assetlinksFile` (one or the other).
    static func decodeSiteAndroid(_ node: JSONNode, _ path: JSONPath, aliases: AppTable, _ reader: inout NodeReader) -> Site.AndroidSource?
    {
        let listNode = node["android"]
        if let fileNode = node["assetlinksFile"] {
            if listNode != nil {
                reader.report(
                    .error,
                    "site.source",
                    "a site either generates assetlinks.json from \"android\" or hosts \"assetlinksFile\" verbatim — not both",
                    fileNode.location,
                    path.key("assetlinksFile")
                )
            }
            guard let file = reader.string(fileNode, path.key("assetlinksFile")) else { return nil }
            if file.value.isEmpty {
                reader.report(
                    .error,
                    "site.source",
                    "\"assetlinksFile\" is empty; give the file's path",
                    fileNode.location,
                    path.key("assetlinksFile")
                )
                return nil
            }
            return .file(file)
        }
        guard let listNode else { return nil }
        let listPath = path.key("android")
        guard let items = listNode.arrayValue else {
            reader.typeMismatch(
                listNode,
                listPath,
                expected: "an array of Android apps",
                hint: "write [\"shop\"] or [{\"package\": …, \"sha256\": […]}]"
            )
            return nil
        }
        if items.isEmpty {
            reader.report(
                .warning,
                "android.empty",
                "\"android\" is empty: /.well-known/assetlinks.json answers 404 for these hosts",
                listNode.location,
                listPath
            )
            return nil
        }
        var apps: [AndroidApp] = []
        var packages: [String: Provenance] = [:]
        for (index, item) in items.enumerated() {
            guard let app = decodeAndroidApp(item, listPath.index(index), aliases: aliases, allowReference: true, &reader) else { continue }
            if let first = packages[app.package.value] {
                reader.report(
                    .warning,
                    "android.duplicate",
                    "\"\(app.package.value)\" is already listed at \(first.path); list each package once, with all its "
                        + "fingerprints and relations",
                    item.location,
                    listPath.index(index)
                )
            } else {
                packages[app.package.value] = Provenance(item.location, listPath.index(index))
            }
            apps.append(app)
        }
        return apps.isEmpty ? nil : .generated(apps)
    }

    /// One Android app: a name from `apps`, `{"app": name, "relations": […]}`, or `{"package", "sha256",
    /// "relations"}`. Fingerprints are accepted in any case, with or without colons, and written in the
    /// canonical form; relations may use short names (`handle_all_urls`).
    static func decodeAndroidApp(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
        allowReference: Bool,
        _ reader: inout NodeReader
    ) -> AndroidApp? {
        func resolve(_ name: Located<String>) -> AndroidApp? {
            if let app = aliases.android[name.value] { return app }
            let message =
                aliases.apple[name.value] != nil
                ? "app \"\(name.value)\" has no \"android\" part; add \"android\": {\"package\": …, \"sha256\": […]} to it in \"apps\""
                : "no app named \"\(name.value)\" in \"apps\""
                    + (closestMatch(to: name.value, in: Array(aliases.android.keys).sorted()).map { "; did you mean \"\($0)\"?" } ?? "")
            reader.report(.error, "app.unknown", message, name.origin.location, name.origin.path)
            return nil
        }
        if allowReference, let name = node.stringValue {
            return resolve(Located(name, Provenance(node.location, path)))
        }
        guard
            let members = reader.object(
                node,
                path,
                what: "an Android app such as {\"package\": \"com.example.app\", \"sha256\": [\"14:6D:…\"]}"
            )
        else { return nil }
        reader.checkKeys(members, path, known: allowReference ? androidKeys : androidKeys.filter { $0 != "app" }, context: "android app")
        var relations = [Located(AssetRelation.handleAllURLs, Provenance(node.location, path))]
        if let relationsNode = node["relations"] {
            relations = []
            for relation in reader.stringArray(relationsNode, path.key("relations"), hint: "write [\"handle_all_urls\"]") ?? [] {
                let expanded = Located(AssetRelation.expand(relation.value), relation.origin)
                AssetLinksDecoder.checkRelation(expanded, &reader)
                relations.append(expanded)
            }
            if relations.isEmpty {
                reader.report(
                    .error,
                    "assetlinks.relation-empty",
                    "\"relations\" is empty, so this app is granted nothing",
                    relationsNode.location,
                    path.key("relations")
                )
            }
        }
        if allowReference, let referenceNode = node["app"] {
            guard let name = reader.string(referenceNode, path.key("app")), var app = resolve(name) else { return nil }
            for key in ["package", "sha256"] {
                guard let conflicting = node[key] else { continue }
                reader.report(
                    .error,
                    "android.app-and-package",
                    "give either \"app\" (a name from \"apps\") or \"\(key)\", not both",
                    conflicting.location,
                    path.key(key)
                )
            }
            if node["relations"] != nil { app.relations = relations }
            return app
        }
        guard let packageNode = node["package"] else {
            reader.report(
                .error,
                "assetlinks.package-missing",
                "an Android app needs \"package\" (its applicationId, e.g. com.example.app)",
                node.location,
                path
            )
            return nil
        }
        guard let package = reader.string(packageNode, path.key("package")) else { return nil }
        if let problem = AndroidIdentity.packageNameProblem(package.value) {
            reader.report(.error, "assetlinks.package-name", problem, package.origin.location, package.origin.path)
        }
        var fingerprints: [Located<String>] = []
        if let list = node["sha256"] {
            let texts =
                list.stringValue.map { [Located($0, Provenance(list.location, path.key("sha256")))] }
                ?? reader.stringArray(list, path.key("sha256")) ?? []
            for text in texts {
                let check = AndroidIdentity.checkFingerprint(text.value)
                if let canonical = check.canonical {
                    fingerprints.append(Located(canonical, text.origin))
                } else if let problem = check.problem {
                    reader.report(.error, "assetlinks.fingerprint", problem, text.origin.location, text.origin.path)
                }
            }
            if texts.isEmpty {
                reader.report(
                    .error,
                    "assetlinks.fingerprints-missing",
                    "\"sha256\" is empty; list the SHA-256 fingerprint of every key that signs the app",
                    list.location,
                    path.key("sha256")
                )
            }
        } else {
            reader.report(
                .error,
                "assetlinks.fingerprints-missing",
                "an Android app needs \"sha256\": [\"14:6D:E9:…\"], its signing certificates' SHA-256 fingerprints (with Play "
                    + "App Signing: the app signing key Play Console shows)",
                node.location,
                path
            )
        }
        return AndroidApp(package: package, fingerprints: fingerprints, relations: relations, origin: Provenance(node.location, path))
    }

    static func decodeService(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
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
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> [Located<String>]
    {
        let path = owner.key("apps")
        var resolved: [Located<String>] = []
        for reference in reader.stringArray(node, path) ?? [] {
            if let id = aliases.apple[reference.value] {
                resolved.append(Located(id, reference.origin))
            } else if reference.value.utf8.contains(UInt8(ascii: ".")) {
                resolved.append(reference)
            } else {
                if aliases.android[reference.value] != nil {
                    reader.report(
                        .error,
                        "app.unknown",
                        "app \"\(reference.value)\" has no Apple app ID (it defines only \"android\"); add \"apple\": "
                            + "\"TEAMID.bundle.id\" to it, or list it under this site's \"android\" instead",
                        reference.origin.location,
                        reference.origin.path,
                        absentKey: AbsentKey(object: owner.description, key: "apps")
                    )
                    continue
                }
                let suggestion = closestMatch(to: reference.value, in: Array(aliases.apple.keys).sorted())
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
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> AppLinksConfig?
    {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: applinksKeys, context: "applinks")
        var applinks = AppLinksConfig(origin: Provenance(node.location, path))
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
        aliases: AppTable,
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
        var details = DetailsConfig(apps: [], components: [], origin: Provenance(node.location, path))
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
                let componentsPath = path.key("components")
                details.components = items.enumerated().compactMap { index, item in
                    AASADecoder.decodeComponent(item, componentsPath.index(index), &reader)
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
