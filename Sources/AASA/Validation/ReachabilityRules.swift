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
            for position in components.indices {
                var shadowing: Int?
                for candidate in 0..<position where shadows(components, candidate, position, inherited: inherited) {
                    if let found = shadowing, offset(components[found]) <= offset(components[candidate]) { continue }
                    shadowing = candidate
                }
                if let earlier = shadowing { reportUnreachable(components[position], shadowedBy: components[earlier], report: report) }
            }
            return
        }
        // Positions, not copies (a component copy retains a dozen references), and the paths by a
        // 64-bit hash chained through `earlierWithSameHash`: a `[String: [Component]]` spent three
        // quarters of the check of a 1,700-component file hashing strings, growing and copying.
        var pathCatchAlls: [Int] = []
        var lastWithHash: [UInt64: Int] = Dictionary(minimumCapacity: components.count)
        var earlierWithSameHash = [Int](repeating: -1, count: components.count)
        var pathHashes = [UInt64](repeating: 0, count: components.count)
        var includes: [Int] = []
        var exclusionsSeen = 0
        for position in components.indices {
            let later = components[position]
            var shadowing: Int?
            func consider(_ candidate: Int) {
                guard shadows(components, candidate, position, inherited: inherited) else { return }
                if let found = shadowing, offset(components[found]) <= offset(components[candidate]) { return }
                shadowing = candidate
            }
            for candidate in pathCatchAlls { consider(candidate) }
            if let path = later.path {
                var path = path
                let hash = path.withUTF8 { FNV1a.wordHash(UnsafeRawBufferPointer($0)) }
                pathHashes[position] = hash
                var candidate = lastWithHash[hash] ?? -1
                var samePath: [Int] = []
                while candidate >= 0 {
                    if components[candidate].path == path { samePath.append(candidate) }
                    candidate = earlierWithSameHash[candidate]
                }
                // In the order written, as before: the earliest shadowing rule is the one named.
                for candidate in samePath.reversed() { consider(candidate) }
            }
            // An exclusion under a broader earlier include is the costly mistake (its URLs open the app), so
            // exclusions are compared with every earlier include, within a bound for huge entries.
            if later.exclude && shadowing == nil && includes.count * exclusionsSeen < 1_000_000 {
                for candidate in includes { consider(candidate) }
            }
            if later.exclude { exclusionsSeen += 1 } else { includes.append(position) }
            if let earlier = shadowing { reportUnreachable(later, shadowedBy: components[earlier], report: report) }
            if isPathCatchAll(later.path) {
                pathCatchAlls.append(position)
            } else if later.path != nil {
                let hash = pathHashes[position]
                earlierWithSameHash[position] = lastWithHash[hash] ?? -1
                lastWithHash[hash] = position
            }
        }
    }

    private static func offset(_ component: Component) -> Int { component.origin.location?.offset ?? 0 }

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
        // The first byte settles nearly every pattern (`/…`) before the whole is read.
        guard pattern.utf8.first == UInt8(ascii: "*") else { return false }
        return pattern.utf8.allSatisfy { $0 == UInt8(ascii: "*") }
    }

    static func isPathCatchAll(_ pattern: String?) -> Bool {
        guard let pattern else { return true }
        return isWildcardOnly(pattern) || (pattern.utf8.count == 2 && pattern == "/*")
    }

    static func hasVacuousQuery(_ component: Component) -> Bool { isVacuous(component.query) }

    static func isVacuous(_ query: QueryPattern?) -> Bool {
        switch query {
        case nil: return true
        case .whole(let text): return isWildcardOnly(text)
        case .items(let items): return items.allSatisfy { isWildcardOnly($0.pattern) }
        }
    }

    static func isCatchAll(_ component: Component) -> Bool {
        isPathCatchAll(component.path) && hasVacuousQuery(component) && isWildcardOnly(component.fragment)
    }

    /// An earlier path pattern that matches every path a later one matches (both present).
    static func coversPath(_ earlier: String?, _ later: String?, caseSensitive: Bool) -> Bool {
        guard let general = earlier, let specific = later else { return false }
        return PatternCoverage.covers(general, specific, caseSensitive: caseSensitive)
    }

    /// Whether the component at `earlier` shadows the one at `later`. Fields are read where they are: a
    /// component handed over whole is copied, a dozen references retained and released, for each pair.
    static func shadows(_ components: [Component], _ earlier: Int, _ later: Int, inherited: MatchOptions) -> Bool {
        let earlierOptions = components[earlier].options.overriding(inherited)
        let laterOptions = components[later].options.overriding(inherited)
        let sameOptions =
            (earlierOptions.caseSensitive ?? true) == (laterOptions.caseSensitive ?? true)
            && (earlierOptions.percentEncoded ?? true) == (laterOptions.percentEncoded ?? true)
        let earlierPath = components[earlier].path
        let laterPath = components[later].path
        let pathCovered =
            isPathCatchAll(earlierPath)
            || (sameOptions
                && (earlierPath == laterPath || coversPath(earlierPath, laterPath, caseSensitive: earlierOptions.caseSensitive ?? true)))
        guard pathCovered else { return false }
        let earlierQuery = components[earlier].query
        guard isVacuous(earlierQuery) || (sameOptions && earlierQuery == components[later].query) else { return false }
        let earlierFragment = components[earlier].fragment
        return isWildcardOnly(earlierFragment) || (sameOptions && earlierFragment == components[later].fragment)
    }
}
