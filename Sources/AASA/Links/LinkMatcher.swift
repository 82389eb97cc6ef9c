/// Which link rule a request's path and query fall under, decided by the same rules as the matcher that
/// decides what the app opens (first rule wins; an `exclude` rule makes the path no link), with what each
/// wildcard of the rule's path matched for the destination templates.
///
/// Most link rules are plain ASCII patterns on the path and the query: those are matched straight on the
/// request's bytes (one pass per rule, no URL built), which the tests hold equal to ``Matcher`` on random
/// URLs. Rules with a substitution variable, non-ASCII text or `percentEncoded: false` go through
/// ``Matcher`` itself, kept compiled; so do the rare requests the byte matcher cannot judge alone (a
/// query item name with `%`, a non-ASCII byte), with a matcher compiled for that request.
public struct LinkMatcher: Sendable {
    /// The app ID the rules are compiled under: the matcher decides per app, a link site has one set of rules.
    static let ruleOwner = "LINKS.rules"
    /// The general matcher, compiled only for rule sets the byte matcher cannot take (a million sites
    /// with link rules would otherwise each keep a compiled AASA matcher they never use).
    let general: Matcher?
    /// Per rule: the path pattern's bytes (folded when case-insensitive), or nil when the rule has no path.
    let plain: [PlainRule]?
    /// False when no rule looks at the query: a request's query is then not read at all.
    let readsQuery: Bool
    /// The rules (shared with the site's, not copied), for a request the byte matcher cannot take.
    let rules: [LinkRule]

    struct PlainRule: Sendable {
        let pattern: [UInt8]?
        let fold: Bool
        let exclude: Bool
        /// `"?": "pattern"`: the whole query (absent: the empty string).
        let wholeQuery: [UInt8]?
        /// `"?": {"name": "pattern"}`: every item of that name must match; an absent one counts as "".
        let items: [QueryItem]
        /// A fragment pattern that the empty fragment fails: no request matches (servers never get one).
        let fragmentFails: Bool
    }

    struct QueryItem: Sendable {
        let name: [UInt8]
        let pattern: [UInt8]
        let matchesEmpty: Bool
    }

    public init(rules: [LinkRule]) {
        self.rules = rules
        func plainText(_ text: String?) -> Bool {
            guard let text else { return true }
            return !text.contains("$(") && text.utf8.allSatisfy { $0 < 0x80 && $0 != 0x20 }
        }
        let simple = rules.allSatisfy { rule in
            let component = rule.component
            let query: Bool
            switch component.query {
            case nil: query = true
            case .whole(let text): query = plainText(text)
            case .items(let items): query = items.allSatisfy { plainText($0.name) && plainText($0.pattern) }
            }
            return component.options.percentEncoded != false && plainText(component.path) && query && plainText(component.fragment)
        }
        plain = simple ? rules.map(Self.plainRule) : nil
        readsQuery = plain?.contains { $0.wholeQuery != nil || !$0.items.isEmpty } ?? true
        general = simple ? nil : Self.compile(rules)
    }

    static func plainRule(_ rule: LinkRule) -> PlainRule {
        let component = rule.component
        let fold = !(component.options.caseSensitive ?? true)
        func bytes(_ text: String) -> [UInt8] { Array(text.utf8).map { fold ? lower($0) : $0 } }
        var wholeQuery: [UInt8]?
        var items: [QueryItem] = []
        switch component.query {
        case .whole(let text): wholeQuery = bytes(text)
        case .items(let patterns):
            items = patterns.map { item in
                let pattern = bytes(item.pattern)
                return QueryItem(name: bytes(item.name), pattern: pattern, matchesEmpty: matches(pattern, [], fold: false))
            }
        case nil: break
        }
        return PlainRule(
            pattern: component.path.map(bytes),
            fold: fold,
            exclude: component.exclude,
            wholeQuery: wholeQuery,
            items: items,
            fragmentFails: component.fragment.map { !matches(bytes($0), [], fold: false) } ?? false
        )
    }

    static func matches(_ pattern: [UInt8], _ text: [UInt8], fold: Bool) -> Bool {
        text.withUnsafeBufferPointer { glob(pattern, $0, fold: fold) != nil }
    }

    static func compile(_ rules: [LinkRule]) -> Matcher {
        let details = AppLinksDetails(appIDs: [Located(ruleOwner)], components: rules.map(\.component))
        return Matcher(AASADocument(applinks: AppLinks(details: [details])))
    }

    /// The AASA matcher over the same rules (compiled now when it was not kept).
    var matcher: Matcher { general ?? Self.compile(rules) }

    public struct Found: Sendable, Equatable {
        public var rule: Int
        public var captures: [String]
    }

    /// `path` and `query` as the request sent them (percent-encoded; no fragment reaches a server).
    public func match(path: String, query: String?) -> Found? {
        var text = path
        let reserved = text.withUTF8 { bytes in
            bytes.count >= 3 && bytes[0] == UInt8(ascii: "/") && bytes[1] == UInt8(ascii: "_") && bytes[2] == UInt8(ascii: "/")
        }
        if reserved { return nil }
        if let plain, let found = matchBytes(plain, &text, query: query) { return found }
        return matchGeneral(path: path, query: query)
    }

    /// Nil when the request has what only ``Matcher`` judges right; `.some(nil)` when no rule makes it a link.
    func matchBytes(_ plain: [PlainRule], _ path: inout String, query: String?) -> Found?? {
        var queryText = readsQuery ? query ?? "" : ""
        return path.withUTF8 { bytes -> Found?? in
            queryText.withUTF8 { queryBytes -> Found?? in
                // Bytes the matcher would percent-encode first: the general path.
                if bytes.contains(where: { $0 >= 0x80 || $0 == 0x20 }) || queryBytes.contains(where: { $0 >= 0x80 || $0 == 0x20 }) {
                    return .none
                }
                for (index, rule) in plain.enumerated() {
                    guard !rule.fragmentFails else { continue }
                    // The path first, with its captures in the same pass unless the rule excludes.
                    var captures: [String] = []
                    if let pattern = rule.pattern {
                        if rule.exclude {
                            guard Self.glob(pattern, bytes, fold: rule.fold) != nil else { continue }
                        } else {
                            guard let found = Self.globCaptures(pattern, bytes, fold: rule.fold) else { continue }
                            captures = found
                        }
                    }
                    if let whole = rule.wholeQuery, Self.glob(whole, queryBytes, fold: rule.fold) == nil { continue }
                    if !rule.items.isEmpty {
                        guard let itemsMatch = Self.itemsMatch(rule.items, queryBytes, fold: rule.fold) else { return .none }
                        if !itemsMatch { continue }
                    }
                    return .some(rule.exclude ? nil : Found(rule: index, captures: captures))
                }
                return .some(nil)
            }
        }
    }

    /// Query items as ``Matcher`` reads them (`&`-separated, empty ones skipped, split at the first `=`;
    /// names compared percent-decoded, values as sent): nil when a name has a `%`, which only the general
    /// matcher decodes.
    static func itemsMatch(_ patterns: [QueryItem], _ query: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool? {
        var items: [(name: Range<Int>, value: Range<Int>)] = []
        var start = 0
        while start <= query.count {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.count
            if end > start {
                let equals = query[start..<end].firstIndex(of: UInt8(ascii: "="))
                let name = start..<(equals ?? end)
                if query[name].contains(UInt8(ascii: "%")) { return nil }
                items.append((name, equals.map { ($0 + 1)..<end } ?? end..<end))
            }
            start = end + 1
        }
        for pattern in patterns {
            var seen = false
            for item in items where item.name.count == pattern.name.count {
                let sameName = zip(query[item.name], pattern.name).allSatisfy { (fold ? lower($0) : $0) == $1 }
                guard sameName else { continue }
                seen = true
                if glob(pattern.pattern, UnsafeBufferPointer(rebasing: query[item.value]), fold: fold) == nil { return false }
            }
            if !seen && !pattern.matchesEmpty { return false }
        }
        return true
    }

    private func matchGeneral(path: String, query: String?) -> Found? {
        let outcome = matcher.match("https://link.invalid" + path + (query.map { "?" + $0 } ?? ""), explainingMisses: false)
        guard outcome.app != nil, let rule = outcome.decidedBy?.ruleIndex else { return nil }
        let component = rules[rule].component
        let captures =
            component.path.flatMap { Self.captures(of: $0, in: path, caseSensitive: component.options.caseSensitive ?? true) } ?? []
        return Found(rule: rule, captures: captures)
    }

    static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Apple's glob (`*` any run, `?` one character, anchored) on bytes, with what each wildcard matched:
    /// the linear-time algorithm with one backtrack point, each `*` as short as the rest allows.
    static func glob(_ pattern: [UInt8], _ text: UnsafeBufferPointer<UInt8>, fold: Bool) -> [Range<Int>]? {
        // Where each pattern element began in the text (the wildcards' captures are read from it): on the
        // stack, since every rule tried on every link request needs one.
        withUnsafeTemporaryAllocation(of: Int.self, capacity: pattern.count + 1) { starts in
            guard globInto(pattern, text, fold: fold, starts: starts) else { return nil }
            var spans: [Range<Int>] = []
            for index in pattern.indices {
                if pattern[index] == UInt8(ascii: "*") {
                    spans.append(starts[index]..<starts[index + 1])
                } else if pattern[index] == UInt8(ascii: "?") {
                    spans.append(starts[index]..<(starts[index] + 1))
                }
            }
            return spans
        }
    }

    /// ``glob(_:_:fold:)`` with the wildcards' text straight away: one array, the one a link request keeps.
    static func globCaptures(_ pattern: [UInt8], _ text: UnsafeBufferPointer<UInt8>, fold: Bool) -> [String]? {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: pattern.count + 1) { starts in
            guard globInto(pattern, text, fold: fold, starts: starts) else { return nil }
            var captures: [String] = []
            for index in pattern.indices where pattern[index] == UInt8(ascii: "*") || pattern[index] == UInt8(ascii: "?") {
                let end = pattern[index] == UInt8(ascii: "*") ? starts[index + 1] : starts[index] + 1
                captures.append(String(decoding: UnsafeBufferPointer(rebasing: text[starts[index]..<end]), as: UTF8.self))
            }
            return captures
        }
    }

    /// Whether `pattern` matches all of `text`; where each pattern element began goes into `starts`.
    private static func globInto(
        _ pattern: [UInt8],
        _ text: UnsafeBufferPointer<UInt8>,
        fold: Bool,
        starts: UnsafeMutableBufferPointer<Int>
    ) -> Bool {
        let star = UInt8(ascii: "*")
        let one = UInt8(ascii: "?")
        var p = 0
        var t = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < pattern.count {
                let element = pattern[p]
                if element == star {
                    starts[p] = t
                    starP = p
                    starT = t
                    p += 1
                    continue
                }
                let byte = fold ? lower(text[t]) : text[t]
                if element == one || element == byte {
                    starts[p] = t
                    p += 1
                    t += 1
                    continue
                }
            }
            guard starP >= 0 else { return false }
            // The last `*` takes one more character; everything after it is matched again.
            starT += 1
            t = starT
            p = starP + 1
        }
        while p < pattern.count && pattern[p] == star {
            starts[p] = t
            p += 1
        }
        guard p == pattern.count else { return false }
        starts[pattern.count] = t
        return true
    }

    /// What each `*` and `?` of `pattern` matched in `text`, for rules the general matcher decides. A
    /// pattern with a substitution variable gives none (its wildcards are not its own characters).
    static func captures(of pattern: String, in text: String, caseSensitive: Bool) -> [String]? {
        if pattern.contains("$(") { return [] }
        var text = text
        return text.withUTF8 { bytes in
            let compiled = Array(pattern.utf8).map { caseSensitive ? $0 : lower($0) }
            return glob(compiled, bytes, fold: !caseSensitive)?.map {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self)
            }
        }
    }
}
