/// Links and the association must agree: a link the AASA does not open can never open the app, and a
/// path the AASA opens that no link rule answers is a 404 for everyone without the app.
enum LinkCoverage {
    /// A path the pattern matches (each wildcard as `x`); nil for patterns with substitution variables.
    static func sample(_ pattern: String) -> String? {
        if pattern.contains("$(") { return nil }
        return String(pattern.map { $0 == "*" || $0 == "?" ? "x" : $0 })
    }

    static func check(_ links: SiteLinks, document: AASADocument?, site: Site) -> [Diagnostic] {
        guard let document else { return [] }
        var findings: [Diagnostic] = []
        let opens = Matcher(document)
        for rule in links.rules where !rule.isExclusion && !rule.webOnly && rule.component.query == nil {
            guard let pattern = rule.component.path, let path = sample(pattern) else { continue }
            if opens.match("https://link.invalid" + path, explainingMisses: false).app == nil {
                findings.append(
                    Diagnostic(
                        .error,
                        "links.not-in-aasa",
                        "the link rule \"\(pattern)\" is not opened by this site's AASA (\(path) opens no app), so it can never open "
                            + "the app: add the path to applinks, or mark the rule \"webOnly\": true",
                        at: rule.origin.location,
                        path: rule.origin.path.description
                    )
                )
            }
        }
        let answers = LinkMatcher(rules: links.rules)
        for details in document.applinks?.details ?? [] {
            for component in details.components ?? [] where !component.exclude && component.query == nil {
                guard let pattern = component.path, let path = sample(pattern), !path.hasPrefix(ReservedPaths.prefix) else { continue }
                if answers.match(path: path, query: nil) == nil {
                    findings.append(
                        Diagnostic(
                            .warning,
                            "links.aasa-unanswered",
                            "the AASA opens \"\(pattern)\" but no link rule answers it: with the app it opens the app, everyone "
                                + "else gets a 404 at \(path); add a link rule for it",
                            at: component.origin.location ?? links.origin.location,
                            path: (component.origin.location == nil ? links.origin.path : component.origin.path).description
                        )
                    )
                }
            }
        }
        return findings
    }
}
