import Support

/// Builds the AASA document of a generated site (docs/aasa-format.md §5): one `{appIDs, components}` entry per
/// config details entry for iOS 13+, then separate `{appID, paths}` entries for iOS 12 — never `paths` and
/// `components` in the same entry.
public enum Generator {
    /// Legacy paths cannot use substitution variables, so they are expanded; beyond this many paths
    /// per component the expansion would bloat the file and the component is left out of legacy.
    public static let legacyExpansionLimit = 64

    public struct Output: Sendable {
        public var document: AASADocument
        public var diagnostics: [Diagnostic]
    }

    public static func document(for site: GeneratedSite) -> Output {
        var findings: [Diagnostic] = []
        var document = AASADocument()
        if let applinks = site.applinks {
            var generated = AppLinks(details: [], origin: applinks.origin)
            let formats = applinks.formats
            if formats.contains(.legacy) { generated.apps = [] }
            if formats.contains(.modern) {
                generated.defaults = applinks.defaults
                generated.substitutionVariables = applinks.substitutionVariables
                for details in applinks.details {
                    generated.details.append(
                        AppLinksDetails(
                            appIDs: details.apps,
                            components: details.components,
                            defaults: details.defaults,
                            origin: details.origin
                        )
                    )
                }
            }
            if formats.contains(.legacy) {
                var variables: [String: [String]] = [:]
                for variable in applinks.substitutionVariables { variables[variable.name] = variable.values.map(\.value) }
                for details in applinks.details {
                    let options = details.defaults.overriding(applinks.defaults)
                    if options.caseSensitive == false {
                        // Said once for the group rather than once per component that inherits it.
                        let origin = details.defaults.caseSensitive == false ? details.origin : applinks.origin
                        findings.append(
                            Diagnostic(
                                .warning,
                                "legacy.case-insensitive",
                                "legacy format: caseSensitive is false here, but iOS 12 compares legacy paths "
                                    + "case-sensitively; its paths match only the letter case written",
                                at: origin.location,
                                path: origin.path.description
                            )
                        )
                    }
                    var paths: [Located<String>] = []
                    for component in details.components {
                        paths += legacyPaths(for: component, inherited: options, variables: variables, findings: &findings)
                    }
                    for app in details.apps {
                        generated.details.append(AppLinksDetails(appID: app, paths: paths, origin: details.origin))
                    }
                }
            }
            document.applinks = generated
        }
        if let apps = site.webcredentials { document.webcredentials = ServiceApps(apps: apps, origin: site.webcredentialsOrigin) }
        if let apps = site.appclips { document.appclips = ServiceApps(apps: apps, origin: site.appclipsOrigin) }
        if let apps = site.activitycontinuation {
            document.activitycontinuation = ServiceApps(apps: apps, origin: site.activitycontinuationOrigin)
        }
        return Output(document: document, diagnostics: findings)
    }

    /// The legacy `paths` that express `component` for iOS 12, with a warning for anything they cannot.
    static func legacyPaths(
        for component: Component,
        inherited: MatchOptions,
        variables: [String: [String]],
        findings: inout [Diagnostic]
    ) -> [Located<String>] {
        let origin = component.origin
        func warn(_ rule: String, _ message: String) {
            findings.append(
                Diagnostic(
                    .warning,
                    rule,
                    "legacy format: \(component.summary) \(message)",
                    at: origin.location,
                    path: origin.path.description
                )
            )
        }
        let queryIsVacuous = AASAValidator.hasVacuousQuery(component)
        let fragmentIsVacuous = AASAValidator.isWildcardOnly(component.fragment)
        if !queryIsVacuous || !fragmentIsVacuous {
            warn(
                "legacy.unsupported-condition",
                "has a \(!queryIsVacuous ? "query" : "fragment") condition, which legacy paths cannot express "
                    + "(iOS 12 compares only the path); it is left out of the legacy entries"
                    + (component.exclude ? ", so iOS 12 does not apply this exclusion" : "")
            )
            return []
        }
        let options = component.options.overriding(inherited)
        var pattern = component.path ?? "*"
        if component.options.caseSensitive == false && inherited.caseSensitive != false {
            warn(
                "legacy.case-insensitive",
                "is case-insensitive, but iOS 12 compares legacy paths case-sensitively; the legacy path matches only "
                    + "the letter case written"
            )
        }
        if options.percentEncoded == false {
            let encoded = percentEncodeNonASCII(pattern)
            warn(
                "legacy.percent-encoded",
                "sets percentEncoded: false, which legacy paths do not support; written percent-encoded as \"\(encoded)\""
            )
            pattern = encoded
        }
        if !pattern.containsBytes("$(") {
            let prefix = component.exclude ? "NOT " : ""
            return [Located(prefix + pattern, origin)]
        }
        var expansions = [""]
        var rest = pattern[...]
        while let start = rest.firstRange(of: "$("), let close = rest[start.upperBound...].firstIndex(of: ")") {
            let name = String(rest[start.upperBound..<close])
            let literal = String(rest[..<start.lowerBound])
            guard let values = variables[name] ?? BuiltinVariables.values(name) else {
                // Undefined: the validator reports it; keep the text so the legacy rule is as (un)reachable as the modern one.
                expansions = expansions.map { $0 + literal + "$(\(name))" }
                rest = rest[rest.index(after: close)...]
                continue
            }
            if expansions.count * values.count > legacyExpansionLimit {
                warn(
                    "legacy.expansion-too-large",
                    "uses $(\(name)), and expanding its variables for iOS 12 would take more than "
                        + "\(legacyExpansionLimit) paths; it is left out of the legacy entries"
                )
                return []
            }
            expansions = expansions.flatMap { prefix in values.map { prefix + literal + $0 } }
            rest = rest[rest.index(after: close)...]
        }
        expansions = expansions.map { $0 + rest }
        let prefix = component.exclude ? "NOT " : ""
        return expansions.map { Located(prefix + $0, origin) }
    }
}
