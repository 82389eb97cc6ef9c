/// A site's Android side: the `android` app list (generated assetlinks.json) or a hosted `assetlinksFile`.
extension ConfigDecoder {
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
}
