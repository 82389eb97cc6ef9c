import Support

extension AASAValidator {
    // MARK: - Reachability

    /// Flags components that an earlier component of the same entry always shadows: a catch-all, an
    /// identical rule, or one whose query condition matches even an absent item (docs/aasa-format.md §3.3 trap).
    static func checkReachability(
        _ components: [Component],
        inherited: MatchOptions,
        report: Reporter
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
        report: Reporter
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
