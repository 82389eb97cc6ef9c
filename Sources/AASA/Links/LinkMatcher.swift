/// Which link rule a request's path and query fall under, decided by the same rules as the matcher that
/// decides what the app opens (first rule wins; an `exclude` rule makes the path no link), with what each
/// wildcard of the rule's path matched for the destination templates.
///
/// Most link rules are plain path patterns: those are matched straight on the request's bytes (one pass
/// per rule, no URL built), which the tests hold equal to ``Matcher`` on random paths. Rules with a query
/// or fragment pattern, a substitution variable or `percentEncoded: false` go through ``Matcher`` itself.
public struct LinkMatcher: Sendable {
    /// The app ID the rules are compiled under: the matcher decides per app, a link site has one set of rules.
    static let ruleOwner = "LINKS.rules"
    /// The general matcher, compiled only for rule sets the byte matcher cannot take (a million sites
    /// with link rules would otherwise each keep a compiled AASA matcher they never use).
    let general: Matcher?
    /// Per rule: the path pattern's bytes (folded when case-insensitive), or nil when the rule has no path.
    let plain: [PlainRule]?
    /// The rules (shared with the site's, not copied), for a request the byte matcher cannot take.
    let rules: [LinkRule]

    struct PlainRule: Sendable {
        let pattern: [UInt8]?
        let fold: Bool
        let exclude: Bool
    }

    public init(rules: [LinkRule]) {
        self.rules = rules
        let simple = rules.allSatisfy { rule in
            let component = rule.component
            return component.query == nil && component.fragment == nil && component.options.percentEncoded != false
                && !(component.path ?? "").contains("$(") && (component.path ?? "").utf8.allSatisfy { $0 < 0x80 && $0 != 0x20 }
        }
        plain =
            simple
            ? rules.map { rule in
                let fold = !(rule.component.options.caseSensitive ?? true)
                let pattern = rule.component.path.map { Array($0.utf8).map { fold ? Self.lower($0) : $0 } }
                return PlainRule(pattern: pattern, fold: fold, exclude: rule.component.exclude)
            } : nil
        general = simple ? nil : Self.compile(rules)
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
        if path.hasPrefix(ReservedPaths.prefix) { return nil }
        var text = path
        if let plain,
            let found = text.withUTF8({ bytes -> Found?? in
                // Bytes the matcher would percent-encode first: the general path below.
                if bytes.contains(where: { $0 >= 0x80 || $0 == 0x20 }) { return .none }
                for (index, rule) in plain.enumerated() {
                    guard let pattern = rule.pattern else {
                        // A rule without a path matches every path.
                        return .some(rule.exclude ? nil : Found(rule: index, captures: []))
                    }
                    if let spans = Self.glob(pattern, bytes, fold: rule.fold) {
                        if rule.exclude { return .some(nil) }
                        return .some(
                            Found(
                                rule: index,
                                captures: spans.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                            )
                        )
                    }
                }
                return .some(nil)
            })
        {
            return found
        }
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
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: pattern.count + 1) { starts in
            globInto(pattern, text, fold: fold, starts: starts)
        }
    }

    private static func globInto(
        _ pattern: [UInt8],
        _ text: UnsafeBufferPointer<UInt8>,
        fold: Bool,
        starts: UnsafeMutableBufferPointer<Int>
    )
        -> [Range<Int>]?
    {
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
            guard starP >= 0 else { return nil }
            // The last `*` takes one more character; everything after it is matched again.
            starT += 1
            t = starT
            p = starP + 1
        }
        while p < pattern.count && pattern[p] == star {
            starts[p] = t
            p += 1
        }
        guard p == pattern.count else { return nil }
        starts[pattern.count] = t
        var spans: [Range<Int>] = []
        for index in pattern.indices {
            if pattern[index] == star {
                spans.append(starts[index]..<starts[index + 1])
            } else if pattern[index] == one {
                spans.append(starts[index]..<(starts[index] + 1))
            }
        }
        return spans
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
