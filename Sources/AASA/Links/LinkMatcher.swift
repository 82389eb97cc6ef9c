/// Which link rule a request's path and query fall under, decided by the same matcher that decides
/// what the app opens (first rule wins; an `exclude` rule makes the path no link), with what each
/// wildcard of the rule's path matched for the destination templates.
public struct LinkMatcher: Sendable {
    /// The app ID the rules are compiled under: the matcher decides per app, a link site has one set of rules.
    static let ruleOwner = "LINKS.rules"
    let matcher: Matcher
    let paths: [String?]
    let caseSensitive: [Bool]

    public init(rules: [LinkRule]) {
        let details = AppLinksDetails(appIDs: [Located(Self.ruleOwner)], components: rules.map(\.component))
        matcher = Matcher(AASADocument(applinks: AppLinks(details: [details])))
        paths = rules.map(\.component.path)
        caseSensitive = rules.map { $0.component.options.caseSensitive ?? true }
    }

    public struct Found: Sendable, Equatable {
        public var rule: Int
        public var captures: [String]
    }

    /// `path` and `query` as the request sent them (percent-encoded; no fragment reaches a server).
    public func match(path: String, query: String?) -> Found? {
        if path.hasPrefix(ReservedPaths.prefix) { return nil }
        let outcome = matcher.match("https://link.invalid" + path + (query.map { "?" + $0 } ?? ""), explainingMisses: false)
        guard outcome.app != nil, let rule = outcome.decidedBy?.ruleIndex else { return nil }
        let captures = paths[rule].flatMap { Self.captures(of: $0, in: path, caseSensitive: caseSensitive[rule]) } ?? []
        return Found(rule: rule, captures: captures)
    }

    /// What each `*` and `?` of `pattern` matched in `text`, left to right, each `*` as short as the rest
    /// of the pattern allows. A pattern with a substitution variable gives none (its wildcards are not
    /// its own characters).
    static func captures(of pattern: String, in text: String, caseSensitive: Bool) -> [String]? {
        if pattern.contains("$(") { return [] }
        let symbols = Array(pattern.unicodeScalars)
        let scalars = Array(text.unicodeScalars)
        func same(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
            caseSensitive ? a == b : foldCase(a.value) == foldCase(b.value)
        }
        // Memoised search: patterns and paths are short, and the first assignment found is kept.
        var failed = Set<Int>()
        var spans: [Range<Int>] = []
        func search(_ p: Int, _ t: Int) -> Bool {
            if p == symbols.count { return t == scalars.count }
            let key = p * (scalars.count + 1) + t
            if failed.contains(key) { return false }
            switch symbols[p] {
            case "*":
                for end in t...scalars.count {
                    spans.append(t..<end)
                    if search(p + 1, end) { return true }
                    spans.removeLast()
                }
            case "?":
                if t < scalars.count {
                    spans.append(t..<(t + 1))
                    if search(p + 1, t + 1) { return true }
                    spans.removeLast()
                }
            default:
                if t < scalars.count && same(symbols[p], scalars[t]) && search(p + 1, t + 1) { return true }
            }
            failed.insert(key)
            return false
        }
        guard search(0, 0) else { return nil }
        return spans.map { String(String.UnicodeScalarView(scalars[$0])) }
    }
}
