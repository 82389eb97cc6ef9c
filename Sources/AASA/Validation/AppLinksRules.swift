import Support

extension AASAValidator {
    // MARK: - applinks

    static func validateAppLinks(
        _ applinks: AppLinks,
        report: Reporter,
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
        report: Reporter
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
        report: Reporter
    ) {
        // Where each pattern sits; the JSON path is only built when a finding needs it (this runs for
        // every component of a config, and most components have no finding).
        enum Place {
            case key(String)
            case item(Provenance)
        }
        // Captured alone: a local function that read `component` would hold a copy of all of it.
        let componentOrigin = component.origin
        func origin(_ place: Place) -> Provenance {
            switch place {
            case .key(let key): return Provenance(componentOrigin.location, componentOrigin.path.key(key))
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
                    Provenance(component.origin.location, component.origin.path.key("?"))
                )
            }
        case .items(let items):
            if items.isEmpty {
                report(
                    .warning,
                    "query.empty-dictionary",
                    "an empty \"?\" dictionary constrains nothing; remove it or name the query items",
                    Provenance(component.origin.location, component.origin.path.key("?"))
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
        origin: @autoclosure () -> Provenance,
        legacy: Bool = false,
        report: Reporter
    ) {
        // Byte scans: these run on every pattern of every site (Character-level search was a tenth of
        // loading a 10,000-host config; the generic UTF-8 view searches, half of checking a large file's).
        var hasFragmentMark = false
        var looksLikeQuery = false
        var first: UInt8?
        var text = pattern
        text.withUTF8 { bytes in
            first = bytes.first
            var sawQuestionMark = false
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "#"): hasFragmentMark = true
                case UInt8(ascii: "?"): sawQuestionMark = true
                case UInt8(ascii: "="): if sawQuestionMark { looksLikeQuery = true }
                default: break
                }
            }
        }
        if let first, first != UInt8(ascii: "/") && first != UInt8(ascii: "*") && first != UInt8(ascii: "?") && !pattern.hasPrefix("$(") {
            report(
                .warning,
                "pattern.leading-slash",
                "path pattern \"\(pattern)\" does not start with '/'; URL paths always do, so write \"/\(pattern)\"",
                origin()
            )
        }
        if hasFragmentMark {
            report(
                .warning,
                "pattern.fragment-in-path",
                "path pattern \"\(pattern)\" contains '#', which never appears in a URL path; "
                    + (legacy ? "legacy paths cannot test fragments" : "match the fragment with the \"#\" key"),
                origin()
            )
        }
        if looksLikeQuery {
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

    static func validateLegacyPaths(_ paths: [Located<String>], report: Reporter) {
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
}
