/// The semantic rules Apple applies to an AASA document (spec §2–§6), run on the decoded model.
///
/// The same rules run on verbatim files and on documents generated from a config; in the latter case
/// model origins point into the config, so findings name the line the user wrote.
public enum AASAValidator {
    /// Apple's documented limit on the uncompressed file (spec §1, C6).
    public static let sizeLimit = 128 * 1024
    /// From here on we warn: a file this close to the limit breaks with the next few rules.
    public static let sizeWarningThreshold = 100 * 1024

    public static func validate(_ document: AASADocument) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        func report(_ severity: Severity, _ rule: String, _ message: String, _ origin: Origin) {
            findings.append(Diagnostic(severity, rule, message, at: origin.location, path: origin.path.description))
        }

        var allAppIDs: [Located<String>] = []
        if let applinks = document.applinks {
            validateAppLinks(applinks, report: report, appIDs: &allAppIDs)
        } else if document.appclips != nil {
            report(
                .warning,
                "applinks.missing",
                "the document has \"appclips\" but no \"applinks\"; some App Clip invocations are reported to "
                    + "need an applinks section too — add \"applinks\": {\"details\": []} to be safe",
                Origin(SourceLocation(offset: 0, line: 1, column: 1), .root)
            )
        }
        func validateService(_ name: String, _ service: ServiceApps?) {
            guard let service else { return }
            if service.apps.isEmpty {
                report(.warning, "service.empty", "\"\(name)\".apps is empty, so the service is enabled for no app", service.origin)
            }
            for app in service.apps {
                validateAppID(app, report: report)
                allAppIDs.append(app)
            }
        }
        validateService("webcredentials", document.webcredentials)
        validateService("appclips", document.appclips)
        validateService("activitycontinuation", document.activitycontinuation)
        // A file that names no app anywhere does nothing at all: no link opens an app, no app gets
        // passwords. (The server's own answer for an unknown host is such a file, on purpose: README.)
        if allAppIDs.isEmpty && !(document.applinks?.details.contains { $0.namesAnApp } ?? false) {
            // It says everything "details is empty" would.
            findings.removeAll { $0.rule == "details.empty" }
            report(
                .error,
                "document.no-app",
                "this file associates no app: no URL on this host opens an app, and no app gets its passwords or "
                    + "App Clips. Add an app ID (TEAMID.bundle.id) to \"applinks\".details (\"appIDs\") or to a service's \"apps\"",
                Origin(SourceLocation(offset: 0, line: 1, column: 1), .root)
            )
        }
        escalateWhenNothingOpens(document, &findings)
        // Bundle IDs are case-insensitive (spec C9): two IDs that differ only in case are one app
        // spelled two ways, which is a mistake somewhere.
        var firstSpelling = FirstSeen<String>()
        // Most documents name one app, or the same spelling several times: nothing to compare.
        let spellings = allAppIDs.first.map { first in allAppIDs.contains { $0.value != first.value } } ?? false
        for app in allAppIDs where spellings {
            let key = app.value.lowercased()
            if let first = firstSpelling[key], first != app.value {
                report(
                    .warning,
                    "appid.case-duplicate",
                    "\"\(app.value)\" and \"\(first)\" differ only in letter case; bundle IDs are case-insensitive, so "
                        + "use one spelling (the one in your app's entitlements)",
                    app.origin
                )
            } else {
                firstSpelling.insertIfAbsent(key, app.value)
            }
        }
        return findings
    }

    /// The findings that each say "this entry opens nothing" are warnings while something else in the file
    /// works; when no entry can open any URL and no other service names an app, the file does nothing a
    /// user wants, which is an error as a file naming no app is.
    static func escalateWhenNothingOpens(_ document: AASADocument, _ findings: inout [Diagnostic]) {
        guard let applinks = document.applinks, !findings.contains(where: { $0.rule == "document.no-app" }) else { return }
        let services = [document.webcredentials, document.appclips, document.activitycontinuation]
        guard !services.contains(where: { !($0?.apps.isEmpty ?? true) }) else { return }
        guard !applinks.details.contains(where: canOpenSomeURL) else { return }
        let opensNothing = [
            "details.empty", "details.no-rules", "components.empty", "paths.empty", "details.no-app", "pattern.fragment-in-path",
        ]
        var escalated = false
        for index in findings.indices where opensNothing.contains(findings[index].rule) && findings[index].severity == .warning {
            findings[index].severity = .error
            findings[index].message += " — and nothing else in this file opens a URL or serves an app, so the file does nothing"
            escalated = true
        }
        if !escalated {
            findings.append(
                Diagnostic(
                    .error,
                    "applinks.opens-nothing",
                    "no rule in this file can open a URL (every rule is an exclusion, or none can match) and no other service "
                        + "names an app, so the file does nothing; add a component that opens the app's URLs",
                    at: SourceLocation(offset: 0, line: 1, column: 1),
                    path: JSONPath.root.description
                )
            )
        }
    }

    /// An entry that names an app and has at least one rule that opens URLs and can match a path.
    static func canOpenSomeURL(_ details: AppLinksDetails) -> Bool {
        guard details.namesAnApp else { return false }
        if let components = details.components {
            return components.contains { !$0.exclude && !($0.path?.utf8.contains(UInt8(ascii: "#")) ?? false) }
        }
        return (details.paths ?? []).contains { !$0.value.hasPrefix("NOT ") && !$0.value.utf8.contains(UInt8(ascii: "#")) }
    }

    /// Size findings for the exact bytes that will be served.
    public static func validateSize(
        _ byteCount: Int,
        contributors: [(String, Int)] = [],
        origin: Origin = Origin(nil, .root)
    ) -> [Diagnostic] {
        let biggest = contributors.sorted { $0.1 > $1.1 }.prefix(3).map { "\($0.0) \(formatBytes($0.1))" }
        let biggestText = biggest.isEmpty ? "" : "; biggest parts: " + biggest.joined(separator: ", ")
        let advice =
            ". Shrink it: use components with wildcards instead of many literal paths, substitution variables "
            + "for repeated alternatives, and drop the legacy format if you do not support iOS 12"
        if byteCount > sizeLimit {
            return [
                Diagnostic(
                    .error,
                    "size.limit",
                    "the document is \(formatBytes(byteCount)) uncompressed, over Apple's 128 KB limit "
                        + "(\(sizeLimit) bytes); iOS ignores the whole file\(biggestText)\(advice)",
                    at: origin.location,
                    path: origin.path.description
                )
            ]
        }
        if byteCount >= sizeWarningThreshold {
            return [
                Diagnostic(
                    .warning,
                    "size.near-limit",
                    "the document is \(formatBytes(byteCount)) uncompressed, close to Apple's 128 KB limit "
                        + "(\(sizeLimit) bytes)\(biggestText)\(advice)",
                    at: origin.location,
                    path: origin.path.description
                )
            ]
        }
        return []
    }

    static func formatBytes(_ count: Int) -> String {
        count >= 10_240 ? "\(count / 1024) KiB (\(count) bytes)" : count == 1 ? "1 byte" : "\(count) bytes"
    }

    /// Size findings for a file's bytes, naming the biggest parts of its document when it is near the limit.
    public static func validateSize(_ byteCount: Int, of document: AASADocument?) -> [Diagnostic] {
        let contributors = byteCount >= sizeWarningThreshold ? document.map(sizeContributors) ?? [] : []
        return validateSize(byteCount, contributors: contributors)
    }

    /// Which parts of a document take the most bytes, for the size-limit message.
    public static func sizeContributors(_ document: AASADocument) -> [(String, Int)] {
        var parts: [(String, Int)] = []
        if let applinks = document.applinks {
            for details in applinks.details {
                let name =
                    details.appIDs != nil
                    ? "details entry for \(details.effectiveAppIDs.joined(separator: ", "))"
                    : "legacy entry for \(details.appID?.value ?? "?")"
                parts.append((name + " (\(details.origin.path))", JSONWriter.bytes(AASARenderer.render(details)).count))
            }
            for variable in applinks.substitutionVariables {
                let size = JSONWriter.bytes(.array(variable.values.map { .string($0.value) })).count
                parts.append(("substitution variable \"\(variable.name)\"", size))
            }
        }
        return parts
    }

    // MARK: - App IDs

    /// The Team ID of the app ID `aasa-server dev` writes into a starter config when given no `--app`.
    public static let placeholderTeamID = "REPLACEME0"

    public static func validateAppID(_ app: Located<String>, report: (Severity, String, String, Origin) -> Void) {
        if isWellFormedAppID(app.value) {
            // Well-formed, and still not an app: a starter config must never pass CI as it is.
            if app.value.utf8.starts(with: placeholderTeamID.utf8) {
                report(
                    .error,
                    "appid.placeholder",
                    "\"\(app.value)\" is the placeholder `aasa-server dev` writes, not your app; replace it with your "
                        + "TEAMID.bundle.id (Team ID from the Apple Developer account's Membership page, bundle ID from Xcode's "
                        + "Signing & Capabilities), or run `aasa-server dev --app TEAMID.BUNDLE`, which updates the starter config",
                    app.origin
                )
            }
            return
        }
        explainAppID(app, report: report)
    }

    /// The detailed checks, each with its own message (run when the fast path declines).
    static func explainAppID(_ app: Located<String>, report: (Severity, String, String, Origin) -> Void) {
        let id = app.value
        let scalars = Array(id.unicodeScalars)
        func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
            ("A"..."Z").contains(s) || ("a"..."z").contains(s) || ("0"..."9").contains(s)
        }
        let fix = "an app ID is <10-character Team ID>.<bundle ID>, e.g. \"ABCDE12345.com.example.app\""
        if id.containsBytes("$(") || id.containsBytes("DEVELOPMENT_TEAM") || id.containsBytes("PRODUCT_BUNDLE_IDENTIFIER") {
            report(
                .error,
                "appid.format",
                "\"\(id)\" is an unexpanded Xcode build-setting placeholder, not an app ID; \(fix)",
                app.origin
            )
            return
        }
        if let space = scalars.firstIndex(where: { $0 == " " || $0 == "\t" }) {
            report(
                .error,
                "appid.format",
                "\"\(id)\" contains whitespace at character \(space + 1); remove it — \(fix)",
                app.origin
            )
            return
        }
        guard let dot = scalars.firstIndex(of: ".") else {
            report(.error, "appid.format", "\"\(id)\" has no Team ID prefix; \(fix)", app.origin)
            return
        }
        let prefix = scalars[..<dot]
        let bundle = scalars[(dot + 1)...]
        if prefix.count != 10 || !prefix.allSatisfy(isAlphanumeric) {
            let looksLikeBundle = ["com", "org", "net", "io", "de", "uk", "co", "app"].contains(
                String(String.UnicodeScalarView(prefix)).lowercased()
            )
            let detail =
                looksLikeBundle
                ? "it starts with a bundle ID and lacks the Team ID prefix"
                : "its prefix \"\(String(String.UnicodeScalarView(prefix)))\" has \(prefix.count) characters"
                    + (prefix.allSatisfy(isAlphanumeric) ? "" : " and non-alphanumeric ones") + " instead of 10 letters/digits"
            report(.error, "appid.format", "\"\(id)\": \(detail); \(fix)", app.origin)
            return
        }
        if bundle.isEmpty || !bundle.allSatisfy({ isAlphanumeric($0) || $0 == "-" || $0 == "." }) {
            let bad = bundle.first { !(isAlphanumeric($0) || $0 == "-" || $0 == ".") }
            report(
                .error,
                "appid.format",
                "\"\(id)\": the bundle ID "
                    + (bundle.isEmpty ? "is empty" : "contains \"\(bad.map { String($0) } ?? "")\"")
                    + "; bundle IDs use only A–Z, a–z, 0–9, '-' and '.'",
                app.origin
            )
            return
        }
        if bundle.first == "." || bundle.last == "." || id.containsBytes("..") {
            report(.error, "appid.format", "\"\(id)\": the bundle ID has an empty part (a leading, trailing or double '.')", app.origin)
            return
        }
        if prefix.contains(where: { ("a"..."z").contains($0) }) {
            report(
                .warning,
                "appid.prefix-lowercase",
                "\"\(id)\": Team ID prefixes are upper-case letters and digits; check the prefix against the "
                    + "developer portal (a wrong prefix silently breaks the association)",
                app.origin
            )
        }
    }

    /// The common case in one pass over the bytes: an upper-case 10-character prefix, '.', and a bundle
    /// ID of letters, digits, '-' and non-empty '.'-separated parts. Anything else gets the detailed checks.
    static func isWellFormedAppID(_ id: String) -> Bool {
        // Checked for every app ID of every document: over contiguous bytes when the string has them.
        if let result = id.utf8.withContiguousStorageIfAvailable({ isWellFormedAppID(bytes: $0) }) { return result }
        return isWellFormedAppID(bytes: Array(id.utf8))
    }

    private static func isWellFormedAppID(bytes: some Collection<UInt8>) -> Bool {
        var index = 0
        var previousWasDot = false
        for byte in bytes {
            if index < 10 {
                guard (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                else { return false }
            } else if index == 10 {
                guard byte == UInt8(ascii: ".") else { return false }
                previousWasDot = true
            } else {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"):
                    previousWasDot = false
                case UInt8(ascii: "."):
                    if previousWasDot { return false }
                    previousWasDot = true
                default:
                    return false
                }
            }
            index += 1
        }
        return index > 11 && !previousWasDot
    }

    // MARK: - applinks

    static func validateAppLinks(
        _ applinks: AppLinks,
        report: (Severity, String, String, Origin) -> Void,
        appIDs: inout [Located<String>]
    ) {
        if let apps = applinks.apps, !apps.isEmpty {
            report(
                .warning,
                "applinks.apps-not-empty",
                "\"applinks\".apps must be an empty array (it is a legacy key; the app IDs belong in details). "
                    + "Write \"apps\": [] or remove it",
                apps[0].origin
            )
        }
        if applinks.details.isEmpty {
            report(
                .warning,
                "details.empty",
                "\"details\" is empty, so no URL on this host opens an app",
                applinks.origin
            )
        }
        let variables = validateVariables(applinks.substitutionVariables, report: report)
        var usedVariables = Set<String>()

        for details in applinks.details {
            if details.appID != nil && details.appIDs != nil {
                report(
                    .warning,
                    "details.appid-ignored",
                    "this entry has both \"appID\" and \"appIDs\"; iOS 13+ ignores \"appID\" when \"appIDs\" is "
                        + "present. Keep \"appIDs\" here and put legacy \"appID\" + \"paths\" in a separate entry",
                    details.appID?.origin ?? details.origin
                )
            }
            if !details.namesAnApp {
                report(
                    .warning,
                    "details.no-app",
                    "this entry names no app (no \"appID\", or an empty \"appIDs\"), so its rules do nothing",
                    details.origin
                )
            }
            for app in details.appIDs ?? [] {
                validateAppID(app, report: report)
                appIDs.append(app)
            }
            if let app = details.appID {
                validateAppID(app, report: report)
                appIDs.append(app)
            }
            if details.components != nil && details.paths != nil {
                report(
                    .warning,
                    "details.mixed-formats",
                    "this entry has both \"components\" and \"paths\": iOS 13+ ignores \"paths\" here and "
                        + "Apple's TN3155 says mixing breaks universal links. Use one {appIDs, components} entry and a "
                        + "separate {appID, paths} entry for iOS 12",
                    details.origin
                )
            } else if details.components == nil && details.paths == nil {
                report(
                    .warning,
                    "details.no-rules",
                    "this entry has neither \"components\" nor \"paths\", so it matches no URL",
                    details.origin
                )
            } else if details.paths != nil && details.appIDs != nil && details.appID == nil {
                report(
                    .warning,
                    "details.appids-with-paths",
                    "\"appIDs\" belongs with \"components\" (iOS 13+), \"paths\" with \"appID\" (iOS 12); this mix "
                        + "is read by neither reliably. Write {appIDs, components} or {appID, paths}",
                    details.origin
                )
            }
            let options = details.defaults.overriding(applinks.defaults)
            if let components = details.components {
                if components.isEmpty {
                    report(
                        .warning,
                        "components.empty",
                        "\"components\" is empty, so this entry matches no URL",
                        details.origin
                    )
                }
                for component in components {
                    validateComponent(component, variables: variables, used: &usedVariables, report: report)
                }
                checkReachability(components, inherited: options, report: report)
            }
            if let paths = details.paths, details.components == nil {
                if paths.isEmpty {
                    report(.warning, "paths.empty", "\"paths\" is empty, so this entry matches no URL", details.origin)
                }
                validateLegacyPaths(paths, report: report)
            } else if let paths = details.paths {
                validateLegacyPaths(paths, report: report)
            }
        }
        for variable in applinks.substitutionVariables where !usedVariables.contains(variable.name) {
            report(
                .warning,
                "variable.unused",
                "substitution variable \"\(variable.name)\" is defined but no component uses $(\(variable.name))",
                variable.origin
            )
        }
    }

    /// Checks names and values; returns the names usable in patterns.
    static func validateVariables(
        _ variables: [SubstitutionVariable],
        report: (Severity, String, String, Origin) -> Void
    ) -> Set<String> {
        var names = Set<String>()
        for variable in variables {
            names.insert(variable.name)
            if variable.name.isEmpty || variable.name.contains(where: { $0 == "$" || $0 == "(" || $0 == ")" }) {
                report(
                    .error,
                    "variable.name-invalid",
                    "substitution variable name \"\(variable.name)\" is invalid: names are non-empty and cannot "
                        + "contain '$', '(' or ')'",
                    variable.origin
                )
            }
            if BuiltinVariables.names.contains(variable.name) {
                report(
                    .warning,
                    "variable.shadows-builtin",
                    "\"\(variable.name)\" redefines a predefined variable; $(\(variable.name)) will mean your list, "
                        + "not Apple's. Pick another name if that is not intended",
                    variable.origin
                )
            }
            if variable.values.isEmpty {
                report(
                    .warning,
                    "variable.empty",
                    "substitution variable \"\(variable.name)\" has no values, so any pattern using it matches nothing",
                    variable.origin
                )
            }
            for value in variable.values where value.value.containsBytes("$(") {
                report(
                    .error,
                    "variable.nested",
                    "value \"\(value.value)\" of \"\(variable.name)\" refers to another variable; values can contain "
                        + "* and ? but not $(...). List the combinations explicitly",
                    value.origin
                )
            }
        }
        return names
    }

    /// Every `$(name)` in a pattern, with its name.
    static func variableReferences(in pattern: String) -> [String] {
        guard pattern.containsBytes("$(") else { return [] }
        var names: [String] = []
        var rest = pattern[...]
        while let start = rest.firstRange(of: "$(") {
            let after = rest[start.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            names.append(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        return names
    }

    static func validateComponent(
        _ component: Component,
        variables: Set<String>,
        used: inout Set<String>,
        report: (Severity, String, String, Origin) -> Void
    ) {
        // Where each pattern sits; the JSON path is only built when a finding needs it (this runs for
        // every component of a config, and most components have no finding).
        enum Place {
            case key(String)
            case item(Origin)
        }
        func origin(_ place: Place) -> Origin {
            switch place {
            case .key(let key): return Origin(component.origin.location, component.origin.path.key(key))
            case .item(let origin): return origin
            }
        }
        if component.path == nil && component.query == nil && component.fragment == nil {
            report(
                .warning,
                "component.matches-everything",
                "this component has no \"/\", \"?\" or \"#\", so it matches every URL on the host"
                    + (component.exclude ? " and excludes all of them from this point on" : "")
                    + "; write \"/\": \"*\" if that is meant, or add the part it should match",
                component.origin
            )
        }
        // Variable references are looked at only in patterns that have one (most have none).
        var patterns: [(String, Place)] = []
        func collectReferences(_ pattern: String, _ place: Place) {
            if pattern.containsBytes("$(") { patterns.append((pattern, place)) }
        }
        if let path = component.path {
            collectReferences(path, .key("/"))
            validatePathPattern(path, origin: origin(.key("/")), report: report)
        }
        if let fragment = component.fragment {
            collectReferences(fragment, .key("#"))
        }
        switch component.query {
        case .whole(let text):
            collectReferences(text, .key("?"))
            if text.hasPrefix("?") && text.count > 1 && text.dropFirst().contains("=") {
                report(
                    .warning,
                    "query.leading-question-mark",
                    "the \"?\" pattern \"\(text)\" starts with '?', which is a one-character wildcard here, not the "
                        + "query separator; write \"\(text.dropFirst())\"",
                    Origin(component.origin.location, component.origin.path.key("?"))
                )
            }
        case .items(let items):
            if items.isEmpty {
                report(
                    .warning,
                    "query.empty-dictionary",
                    "an empty \"?\" dictionary constrains nothing; remove it or name the query items",
                    Origin(component.origin.location, component.origin.path.key("?"))
                )
            }
            for item in items {
                collectReferences(item.pattern, .item(item.origin))
                // A variable stands for at least one character, so only a pattern of nothing but '*'
                // (or nothing at all) matches the empty string.
                if item.pattern.utf8.allSatisfy({ $0 == UInt8(ascii: "*") }) {
                    let consequence =
                        component.exclude
                        ? "so this exclusion also blocks URLs without \"\(item.name)\" — every URL its other parts match"
                        : "so this rule also matches URLs without \"\(item.name)\""
                    report(
                        .warning,
                        "query.matches-absent",
                        "query item pattern \"\(item.pattern)\" for \"\(item.name)\" matches the empty string, and an "
                            + "absent item counts as empty (WWDC19), \(consequence). Use \"?*\" to require a value",
                        item.origin
                    )
                }
            }
        case nil: break
        }
        for (pattern, place) in patterns {
            for name in variableReferences(in: pattern) {
                let origin = origin(place)
                if variables.contains(name) {
                    used.insert(name)
                } else if BuiltinVariables.names.contains(name) {
                    continue
                } else if let cased = (Array(variables) + BuiltinVariables.names).first(where: {
                    $0.lowercased() == name.lowercased()
                }) {
                    report(
                        .error,
                        "variable.miscased",
                        "$(\(name)) is not defined; variable names are case-sensitive — did you mean $(\(cased))?",
                        origin
                    )
                } else {
                    let suggestion = closestMatch(to: name, in: Array(variables) + BuiltinVariables.names)
                    report(
                        .error,
                        "variable.undefined",
                        "$(\(name)) is not defined in \"substitutionVariables\" and is not predefined"
                            + (suggestion.map { "; did you mean $(\($0))?" } ?? "; define it or remove the reference"),
                        origin
                    )
                }
            }
        }
    }

    static func validatePathPattern(
        _ pattern: String,
        origin: @autoclosure () -> Origin,
        legacy: Bool = false,
        report: (Severity, String, String, Origin) -> Void
    ) {
        if let first = pattern.first, first != "/" && first != "*" && first != "?" && !pattern.hasPrefix("$(") {
            report(
                .warning,
                "pattern.leading-slash",
                "path pattern \"\(pattern)\" does not start with '/'; URL paths always do, so write \"/\(pattern)\"",
                origin()
            )
        }
        // Byte scans: these run on every pattern of every site, and Character-level search was a tenth
        // of loading a 10,000-host config.
        if pattern.utf8.contains(UInt8(ascii: "#")) {
            report(
                .warning,
                "pattern.fragment-in-path",
                "path pattern \"\(pattern)\" contains '#', which never appears in a URL path; "
                    + (legacy ? "legacy paths cannot test fragments" : "match the fragment with the \"#\" key"),
                origin()
            )
        }
        if let question = pattern.utf8.firstIndex(of: UInt8(ascii: "?")), pattern.utf8[question...].contains(UInt8(ascii: "=")) {
            report(
                .warning,
                "pattern.query-in-path",
                "path pattern \"\(pattern)\" looks like it includes a query string, but '?' is a one-character "
                    + "wildcard in a path and the query is never part of the path; "
                    + (legacy
                        ? "legacy paths cannot test the query — use components with \"?\" (iOS 13+)"
                        : "move it to the \"?\" key"),
                origin()
            )
        }
    }

    static func validateLegacyPaths(_ paths: [Located<String>], report: (Severity, String, String, Origin) -> Void) {
        var catchAll: Located<String>?
        var seen = FirstSeen<Located<String>>()
        var positives: [Located<String>] = []
        for path in paths {
            let text = path.value
            if !text.hasPrefix("NOT ") && startsWithNotIgnoringCase(text) {
                let rest = text.dropFirst(3)
                if rest.first == "/" || rest.first == " " || rest.first == "*" {
                    report(
                        .error,
                        "paths.not-syntax",
                        "\"\(text)\" is meant as an exclusion but exclusions are written \"NOT \" — capital NOT and "
                            + "exactly one space — e.g. \"NOT \(rest.drop { $0 == " " })\"",
                        path.origin
                    )
                    continue
                }
            }
            let pattern = text.hasPrefix("NOT ") ? String(text.dropFirst(4)) : text
            validatePathPattern(pattern, origin: path.origin, legacy: true, report: report)
            if pattern.containsBytes("$(") {
                report(
                    .warning,
                    "variable.in-legacy-path",
                    "legacy \"paths\" do not support substitution variables (iOS 13.5+ components only); "
                        + "\"\(text)\" is compared literally",
                    path.origin
                )
            }
            if let catchAll {
                report(
                    .warning,
                    "rule.unreachable",
                    "\"\(text)\" is never reached: \"\(catchAll.value)\" before it matches every path and evaluation "
                        + "stops at the first match. Move it before \"\(catchAll.value)\"",
                    path.origin
                )
                continue
            }
            if let earlier = seen[text] {
                report(
                    .warning,
                    "rule.unreachable",
                    "\"\(text)\" repeats an earlier path (at \(earlier.origin.path)); the later copy never decides",
                    path.origin
                )
            }
            if text.hasPrefix("NOT "), positives.count < 10_000,
                let covering = positives.first(where: { PatternCoverage.covers($0.value, pattern) })
            {
                report(
                    .warning,
                    "rule.unreachable",
                    "\"\(text)\" never takes effect: the earlier \"\(covering.value)\" (at \(covering.origin.path)) matches every "
                        + "path it excludes, and legacy paths are tried in order with the first match deciding — so those URLs "
                        + "open the app. Move \"\(text)\" before \"\(covering.value)\"",
                    path.origin
                )
            }
            if !text.hasPrefix("NOT ") { positives.append(path) }
            seen.insertIfAbsent(text, path)
            if pattern == "*" || pattern == "/*" { catchAll = path }
        }
    }

    /// "NOT", "not", "Not"… at the start, checked on bytes (this runs for every legacy path).
    static func startsWithNotIgnoringCase(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in [UInt8(ascii: "n"), UInt8(ascii: "o"), UInt8(ascii: "t")] {
            guard let byte = bytes.next(), byte | 0x20 == expected else { return false }
        }
        return true
    }

    // MARK: - Reachability

    /// Flags components that an earlier component of the same entry always shadows: a catch-all, an
    /// identical rule, or one whose query condition matches even an absent item (spec §3.3 trap).
    static func checkReachability(
        _ components: [Component],
        inherited: MatchOptions,
        report: (Severity, String, String, Origin) -> Void
    ) {
        // Only two kinds of earlier rule can shadow a later one: a rule whose path matches every path,
        // or one with exactly the same path. Indexing those keeps this linear for entries with
        // thousands of components.
        // A few components (nearly every entry): comparing each with every earlier one is cheaper than
        // building the index.
        if components.count <= 16 {
            for (position, later) in components.enumerated() {
                var shadowing: Component?
                for candidate in components[..<position] where shadows(candidate, later, inherited: inherited) {
                    if let found = shadowing, (found.origin.location?.offset ?? 0) <= (candidate.origin.location?.offset ?? 0) { continue }
                    shadowing = candidate
                }
                if let earlier = shadowing { reportUnreachable(later, shadowedBy: earlier, report: report) }
            }
            return
        }
        var pathCatchAlls: [Component] = []
        var byPath: [String: [Component]] = [:]
        var includes: [Component] = []
        var exclusionsSeen = 0
        for later in components {
            var shadowing: Component?
            func consider(_ candidate: Component) {
                guard shadows(candidate, later, inherited: inherited) else { return }
                if let found = shadowing, (found.origin.location?.offset ?? 0) <= (candidate.origin.location?.offset ?? 0) { return }
                shadowing = candidate
            }
            for candidate in pathCatchAlls { consider(candidate) }
            if let path = later.path, let samePath = byPath[path] { for candidate in samePath { consider(candidate) } }
            // An exclusion under a broader earlier include is the costly mistake (its URLs open the app), so
            // exclusions are compared with every earlier include, within a bound for huge entries.
            if later.exclude && shadowing == nil && includes.count * exclusionsSeen < 1_000_000 {
                for candidate in includes { consider(candidate) }
            }
            if later.exclude { exclusionsSeen += 1 } else { includes.append(later) }
            if let earlier = shadowing { reportUnreachable(later, shadowedBy: earlier, report: report) }
            if isPathCatchAll(later.path) {
                pathCatchAlls.append(later)
            } else if let path = later.path {
                byPath[path, default: []].append(later)
            }
        }
    }

    private static func reportUnreachable(
        _ later: Component,
        shadowedBy earlier: Component,
        report: (Severity, String, String, Origin) -> Void
    ) {
        if later.exclude && !earlier.exclude {
            report(
                .warning,
                "rule.unreachable",
                "this exclusion never takes effect: the earlier \(earlier.summary) (at \(earlier.origin.path)) matches every URL "
                    + "it excludes and the first match decides, so those URLs open the app. Move the exclusion above it",
                later.origin
            )
            return
        }
        let because = isCatchAll(earlier) ? "it matches every URL" : "it matches every URL this rule matches"
        report(
            .warning,
            "rule.unreachable",
            "this component is never reached: the earlier \(earlier.summary) (at \(earlier.origin.path)) "
                + "comes first and \(because); the first match decides. Move this rule above it"
                + (hasVacuousQuery(earlier) && earlier.query != nil
                    ? ", or make the earlier query pattern \"?*\" (a \"*\" also matches an absent item)" : ""),
            later.origin
        )
    }

    static func isWildcardOnly(_ pattern: String?) -> Bool {
        guard let pattern else { return true }
        return !pattern.isEmpty && pattern.allSatisfy { $0 == "*" }
    }

    static func isPathCatchAll(_ pattern: String?) -> Bool {
        guard let pattern else { return true }
        return isWildcardOnly(pattern) || pattern == "/*"
    }

    static func hasVacuousQuery(_ component: Component) -> Bool {
        switch component.query {
        case nil: return true
        case .whole(let text): return isWildcardOnly(text)
        case .items(let items): return items.allSatisfy { isWildcardOnly($0.pattern) }
        }
    }

    static func isCatchAll(_ component: Component) -> Bool {
        isPathCatchAll(component.path) && hasVacuousQuery(component) && isWildcardOnly(component.fragment)
    }

    /// An earlier path pattern that matches every path a later one matches (both present).
    static func coversPath(_ earlier: Component, _ later: Component, caseSensitive: Bool) -> Bool {
        guard let general = earlier.path, let specific = later.path else { return false }
        return PatternCoverage.covers(general, specific, caseSensitive: caseSensitive)
    }

    static func shadows(_ earlier: Component, _ later: Component, inherited: MatchOptions) -> Bool {
        let earlierOptions = earlier.options.overriding(inherited)
        let laterOptions = later.options.overriding(inherited)
        let sameOptions =
            (earlierOptions.caseSensitive ?? true) == (laterOptions.caseSensitive ?? true)
            && (earlierOptions.percentEncoded ?? true) == (laterOptions.percentEncoded ?? true)
        let pathCovered =
            isPathCatchAll(earlier.path)
            || (sameOptions
                && (earlier.path == later.path || coversPath(earlier, later, caseSensitive: earlierOptions.caseSensitive ?? true)))
        let queryCovered = hasVacuousQuery(earlier) || (sameOptions && earlier.query == later.query)
        let fragmentCovered = isWildcardOnly(earlier.fragment) || (sameOptions && earlier.fragment == later.fragment)
        return pathCovered && queryCovered && fragmentCovered
    }
}

extension AASAValidator {
    /// Everything we check on a hosted (verbatim) file: syntax, structure, meaning and size.
    public static func validateFile(_ bytes: [UInt8]) -> (document: AASADocument?, diagnostics: [Diagnostic]) {
        let decoded = AASADecoder.decode(bytes)
        var findings = decoded.diagnostics
        if let document = decoded.document {
            findings += validate(document)
        }
        findings += validateSize(bytes.count, of: decoded.document)
        return (decoded.document, findings.withoutCascades())
    }
}

/// The first value recorded for each key. Documents have a handful of app IDs and paths each, and for
/// those a scan beats hashing every key; past a few dozen keys a dictionary takes over.
struct FirstSeen<Value> {
    private var few: [(key: String, value: Value)] = []
    private var many: [String: Value]?

    subscript(key: String) -> Value? {
        if let many { return many[key] }
        return few.first { $0.key == key }?.value
    }

    mutating func insertIfAbsent(_ key: String, _ value: Value) {
        if many == nil && few.count >= 32 {
            var index: [String: Value] = [:]
            for entry in few where index[entry.key] == nil { index[entry.key] = entry.value }
            many = index
            few = []
        }
        if many != nil {
            if many?[key] == nil { many?[key] = value }
        } else if !few.contains(where: { $0.key == key }) {
            few.append((key, value))
        }
    }
}
