/// Which rule decided a URL: its details entry, its position, its kind and text.
///
/// A class because every match outcome carries one: handing out a reference is cheaper than copying
/// its strings on the hot path.
public final class RuleReference: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case component
        case path
    }

    public let detailsIndex: Int
    public let ruleIndex: Int
    public let kind: Kind
    /// The rule as written: a component as compact JSON, a legacy path as its string.
    public let pattern: String
    public let exclude: Bool
    public let origin: Provenance

    init(detailsIndex: Int, ruleIndex: Int, kind: Kind, pattern: String, exclude: Bool, origin: Provenance) {
        self.detailsIndex = detailsIndex
        self.ruleIndex = ruleIndex
        self.kind = kind
        self.pattern = pattern
        self.exclude = exclude
        self.origin = origin
    }

    public static func == (lhs: RuleReference, rhs: RuleReference) -> Bool {
        lhs.detailsIndex == rhs.detailsIndex && lhs.ruleIndex == rhs.ruleIndex && lhs.kind == rhs.kind
            && lhs.pattern == rhs.pattern && lhs.exclude == rhs.exclude
    }
}

/// The prediction for one URL, with the reasoning `match` prints.
public struct MatchOutcome: Sendable {
    public var url: String
    /// The app iOS opens, or nil when the URL stays in the browser.
    public var app: String?
    /// Every app that opens the URL when installed, in the order iOS prefers them (`app` is the first).
    public var apps: [String]
    /// The rule that gave `app`; for a URL that stays in the browser, the exclusion that blocked it.
    public var decidedBy: RuleReference?
    /// Apps whose first matching rule was an exclusion (they will not open this URL).
    public var blockedApps: [String]
    /// The exclusion that blocked each of `blockedApps`, at the same index: each app's own entry decides it.
    public var blockedBy: [RuleReference] = []
    /// For a URL no rule matched: the rule that came closest and why it failed.
    public var closest: NearMiss?
    /// Why the text can never be a universal link whatever the file says (not http or https, no scheme).
    public var notALink: String?

    public init(
        url: String,
        app: String?,
        decidedBy: RuleReference?,
        blockedApps: [String],
        closest: NearMiss? = nil,
        notALink: String? = nil
    ) {
        self.url = url
        self.app = app
        self.apps = app.map { [$0] } ?? []
        self.decidedBy = decidedBy
        self.blockedApps = blockedApps
        self.closest = closest
        self.notALink = notALink
    }
}

extension RuleReference: CustomStringConvertible {
    /// `details[0] component 1: {"/":"/product/*"} (line 19)`.
    public var description: String {
        var text = "details[\(detailsIndex)] \(kind.rawValue) \(ruleIndex): \(pattern)"
        if let location = origin.location { text += " (line \(location.line))" }
        return text
    }
}

extension MatchOutcome {
    /// Why the URL opens what it opens, in one line.
    public var reason: String {
        if app != nil, let rule = decidedBy {
            return "decided by \(rule)" + (blockedApps.isEmpty ? "" : "; excluded earlier for \(blockedApps.joined(separator: ", "))")
        }
        if let rule = decidedBy { return "excluded by \(rule)" }
        if let notALink { return notALink }
        if let closest { return "no rule matches; closest: \(closest.rule) — \(closest.reason)" }
        return "no rule matches"
    }
}

public struct NearMiss: Sendable {
    public var rule: RuleReference
    public var reason: String
}

/// Predicts which app iOS opens for a URL under one AASA document (docs/aasa-format.md §4).
///
/// Walk `details` in order; within an entry try its rules (components, or legacy paths when the entry
/// has no components) in order; the first rule that matches decides for every app of that entry that
/// no earlier entry decided: a match makes the app a candidate, an exclusion blocks it. The answer is
/// the first candidate. Compile once, then call ``match(_:)`` as often as needed; it is thread-safe.
public struct Matcher: Sendable {
    final class CompiledComponent: Sendable {
        let path: Pattern?
        let wholeQuery: Pattern?
        let queryItems: [(name: [UInt32], pattern: Pattern)]
        let fragment: Pattern?
        let exclude: Bool
        let caseSensitive: Bool
        let percentEncoded: Bool

        init(
            path: Pattern?,
            wholeQuery: Pattern?,
            queryItems: [(name: [UInt32], pattern: Pattern)],
            fragment: Pattern?,
            exclude: Bool,
            caseSensitive: Bool,
            percentEncoded: Bool
        ) {
            self.path = path
            self.wholeQuery = wholeQuery
            self.queryItems = queryItems
            self.fragment = fragment
            self.exclude = exclude
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
        }
    }

    /// Classes, not structs: the match loop then retains one reference per rule instead of every field.
    final class CompiledRule: Sendable {
        let reference: RuleReference
        let component: CompiledComponent

        init(reference: RuleReference, component: CompiledComponent) {
            self.reference = reference
            self.component = component
        }
    }

    final class CompiledEntry: Sendable {
        let apps: [String]
        let rules: [CompiledRule]

        init(apps: [String], rules: [CompiledRule]) {
            self.apps = apps
            self.rules = rules
        }
    }

    let entries: [CompiledEntry]
    /// No entry this reading sees: for the legacy reading, a document with only `appIDs` + `components`.
    public var hasNoEntries: Bool { entries.isEmpty }

    /// Which keys a device reads: iOS 13 and later read `appIDs` and `components` (and fall back to
    /// `appID` + `paths` in entries without components); iOS 12 reads only `appID` + `paths`.
    public enum Reading: Sendable {
        case modern
        case legacy
    }

    public init(_ document: AASADocument, reading: Reading = .modern) {
        guard let applinks = document.applinks else {
            entries = []
            return
        }
        var userVariables: [String: [String]] = [:]
        for variable in applinks.substitutionVariables where userVariables[variable.name] == nil {
            userVariables[variable.name] = variable.values.map(\.value)
        }
        // User-defined names win over the predefined ones: the document is the more specific source.
        let variables = userVariables
        let lookup: (String) -> [String]? = { name in variables[name] ?? BuiltinVariables.values(name) }
        var entries: [CompiledEntry] = []
        for (detailsIndex, details) in applinks.details.enumerated() {
            var rules: [CompiledRule] = []
            if reading == .legacy {
                // iOS 12 knows neither "appIDs" nor "components": an entry counts only through "appID" + "paths".
                guard let app = details.appID, let paths = details.paths else { continue }
                entries.append(CompiledEntry(apps: [app.value], rules: Self.legacyRules(paths, detailsIndex: detailsIndex)))
                continue
            }
            if let components = details.components {
                // iOS 13+ ignores `paths` when `components` is present (docs/aasa-format.md §5, WWDC19).
                for (ruleIndex, component) in components.enumerated() {
                    let options = component.options.overriding(details.defaults).overriding(applinks.defaults)
                    let caseSensitive = options.caseSensitive ?? true
                    let percentEncoded = options.percentEncoded ?? true
                    func compile(_ text: String?) -> Pattern? {
                        text.map { Pattern($0, caseSensitive: caseSensitive, variables: lookup) }
                    }
                    var wholeQuery: Pattern?
                    var queryItems: [(name: [UInt32], pattern: Pattern)] = []
                    switch component.query {
                    case .whole(let text): wholeQuery = compile(text)
                    case .items(let items):
                        queryItems = items.map { item in
                            let name = item.name.unicodeScalars.map { caseSensitive ? $0.value : foldCase($0.value) }
                            return (name, Pattern(item.pattern, caseSensitive: caseSensitive, variables: lookup))
                        }
                    case nil: break
                    }
                    let compiled = CompiledComponent(
                        path: compile(component.path),
                        wholeQuery: wholeQuery,
                        queryItems: queryItems,
                        fragment: compile(component.fragment),
                        exclude: component.exclude,
                        caseSensitive: caseSensitive,
                        percentEncoded: percentEncoded
                    )
                    let reference = RuleReference(
                        detailsIndex: detailsIndex,
                        ruleIndex: ruleIndex,
                        kind: .component,
                        pattern: component.summary,
                        exclude: component.exclude,
                        origin: component.origin
                    )
                    rules.append(CompiledRule(reference: reference, component: compiled))
                }
            } else if let paths = details.paths {
                rules = Self.legacyRules(paths, detailsIndex: detailsIndex)
            }
            entries.append(CompiledEntry(apps: details.effectiveAppIDs, rules: rules))
        }
        self.entries = entries
    }

    /// Legacy paths: "NOT " excludes; only the path is compared, case-sensitively (docs/aasa-format.md §4).
    static func legacyRules(_ paths: [Located<String>], detailsIndex: Int) -> [CompiledRule] {
        paths.enumerated().map { ruleIndex, path in
            let exclude = path.value.hasPrefix("NOT ")
            let text = exclude ? String(path.value.dropFirst(4)) : path.value
            let compiled = CompiledComponent(
                path: Pattern(text, caseSensitive: true, variables: { _ in nil }),
                wholeQuery: nil,
                queryItems: [],
                fragment: nil,
                exclude: exclude,
                caseSensitive: true,
                percentEncoded: true
            )
            let reference = RuleReference(
                detailsIndex: detailsIndex,
                ruleIndex: ruleIndex,
                kind: .path,
                pattern: path.value,
                exclude: exclude,
                origin: path.origin
            )
            return CompiledRule(reference: reference, component: compiled)
        }
    }

    public func match(_ urlText: String, explainingMisses: Bool = true) -> MatchOutcome {
        match(MatchURL(urlText), explainingMisses: explainingMisses)
    }

    /// Decides `url`. With `explainingMisses`, a URL that no rule matches also gets ``MatchOutcome/closest``
    /// (a second pass over every rule: the CLI wants it, a hot loop does not).
    public func match(_ url: MatchURL, explainingMisses: Bool = true) -> MatchOutcome {
        if let reason = Self.whyNotALink(url) {
            return MatchOutcome(url: url.text, app: nil, decidedBy: nil, blockedApps: [], notALink: reason)
        }
        var prepared = PreparedURL(url)
        var blocked: [String] = []
        var blockedBy: [RuleReference] = []
        var firstExclusion: RuleReference?
        var opened: MatchOutcome?
        for entry in entries {
            let undecided = entry.apps.filter { !blocked.contains($0) && !(opened?.apps.contains($0) ?? false) }
            guard !undecided.isEmpty else { continue }
            for rule in entry.rules where Matcher.failure(of: rule.component, &prepared) == nil {
                if rule.component.exclude {
                    blocked.append(contentsOf: undecided)
                    blockedBy.append(contentsOf: repeatElement(rule.reference, count: undecided.count))
                    if firstExclusion == nil { firstExclusion = rule.reference }
                } else if opened == nil {
                    opened = MatchOutcome(url: url.text, app: undecided[0], decidedBy: rule.reference, blockedApps: blocked, closest: nil)
                    opened?.blockedBy = blockedBy
                    opened?.apps = undecided
                } else {
                    // A later entry can still open apps no earlier entry decided; the first rule stays the answer.
                    opened?.apps += undecided
                }
                break
            }
        }
        if let opened { return opened }
        var outcome = MatchOutcome(url: url.text, app: nil, decidedBy: firstExclusion, blockedApps: blocked)
        outcome.blockedBy = blockedBy
        if firstExclusion == nil && explainingMisses { outcome.closest = closestRule(&prepared, url) }
        return outcome
    }

    /// Only http and https URLs are universal links; text without a scheme is no URL a device sees.
    public static func whyNotALink(_ url: MatchURL) -> String? {
        guard let scheme = url.scheme else {
            let shown = url.text.hasPrefix("/") ? "https://HOST" + url.text : "https://" + url.text
            return "missing scheme: a universal link is a full URL (write \(shown))"
        }
        guard scheme == "http" || scheme == "https" else {
            return "only http and https URLs are universal links (\(scheme): URLs go to whatever handles that scheme)"
        }
        return nil
    }

    /// Why a rule does not match, or nil when it matches. Cheap on the hot path: the reason text is
    /// only built by ``closestRule(_:)``.
    static func failure(of rule: CompiledComponent, _ url: inout PreparedURL) -> FailedPart? {
        if rule.percentEncoded {
            // As-sent comparison: read the URL's bytes directly (the usual case, and the hot path).
            let parts = url.parts
            let fold = !rule.caseSensitive
            if let path = rule.path, !path.matches(bytes: parts.path, fold: fold) { return .path }
            if let query = rule.wholeQuery, !query.matches(bytes: parts.query ?? [], fold: fold) { return .query(nil) }
            if rule.queryItems.isEmpty {
                if let fragment = rule.fragment, !fragment.matches(bytes: parts.fragment ?? [], fold: fold) { return .fragment }
                return nil
            }
        }
        let text = url.variant(caseSensitive: rule.caseSensitive, percentEncoded: rule.percentEncoded)
        if let path = rule.path, !path.matches(text.path) { return .path }
        if let query = rule.wholeQuery, !query.matches(text.query) { return .query(nil) }
        for (position, item) in rule.queryItems.enumerated() {
            // Every occurrence of a repeated name must match; an absent item counts as "" (docs/aasa-format.md §3.3, C4, C11).
            var seen = false
            for candidate in text.items where candidate.name == item.name {
                seen = true
                if !item.pattern.matches(candidate.value) { return .query(position) }
            }
            if !seen && !item.pattern.matchesEmpty { return .query(position) }
        }
        if let fragment = rule.fragment, !fragment.matches(text.fragment) { return .fragment }
        return nil
    }

    enum FailedPart: Equatable {
        case path
        case query(Int?)
        case fragment
    }

    private func closestRule(_ url: inout PreparedURL, _ original: MatchURL) -> NearMiss? {
        var best: (score: Int, rule: CompiledRule, failure: FailedPart)?
        // The question on a miss is "why does my link not open the app", so the rules that would
        // open it are the interesting ones; exclusions only when there is nothing else.
        let anyInclusive = entries.contains { $0.rules.contains { !$0.component.exclude } }
        for entry in entries {
            for rule in entry.rules where !(anyInclusive && rule.component.exclude) {
                guard let failure = Matcher.failure(of: rule.component, &url) else { continue }
                let text = url.variant(caseSensitive: rule.component.caseSensitive, percentEncoded: rule.component.percentEncoded)
                // A rule whose path matched got further than any whose path did not; among those,
                // the longer shared literal prefix is closer.
                var score = 0
                switch failure {
                case .path where Self.missesOnlyTheLeadingSlash(rule.component, text.path):
                    // The rule was meant for this URL; nothing is closer.
                    score = 30_000
                case .path:
                    let prefix = rule.component.path?.literalPrefix ?? []
                    score = zip(prefix, text.path).prefix { $0 == $1 }.count
                case .query: score = 10_000
                case .fragment: score = 20_000
                }
                if best == nil || score > best?.score ?? 0 { best = (score, rule, failure) }
            }
        }
        guard let (_, rule, failure) = best else { return nil }
        // Quote the URL as written (not case-folded) in the explanation.
        var display = PreparedURL(original)
        return NearMiss(rule: rule.reference, reason: explain(failure, rule.component, &display))
    }

    private func explain(_ failure: FailedPart, _ rule: CompiledComponent, _ url: inout PreparedURL) -> String {
        let text = url.variant(caseSensitive: true, percentEncoded: rule.percentEncoded)
        func show(_ scalars: [UInt32]) -> String {
            String(String.UnicodeScalarView(scalars.compactMap(Unicode.Scalar.init)))
        }
        let caseNote = rule.caseSensitive ? "" : " (compared ignoring case)"
        switch failure {
        case .path where Self.missesOnlyTheLeadingSlash(rule, text.path):
            let source = rule.path?.source ?? ""
            return "the pattern \"\(source)\" has no leading \"/\", and every URL path starts with one, so it can never match; "
                + "write \"/\(source)\""
        case .path:
            return "path \"\(show(text.path))\" does not match \"\(rule.path?.source ?? "*")\"\(caseNote)"
        case .query(nil):
            return "query \"\(show(text.query))\" does not match \"\(rule.wholeQuery?.source ?? "*")\"\(caseNote)"
        case .query(let position?):
            let item = rule.queryItems[position]
            let name = show(item.name)
            let values = text.items.filter { (rule.caseSensitive ? $0.name : $0.name.map(foldCase)) == item.name }.map {
                "\"\(show($0.value))\""
            }
            if values.isEmpty {
                return "query item \"\(name)\" is absent (counts as \"\") and \"\(item.pattern.source)\" needs a value"
            }
            return "query item \"\(name)\" = \(values.joined(separator: ", ")) does not match \"\(item.pattern.source)\""
                + (values.count > 1 ? " (every occurrence must match)" : "") + caseNote
        case .fragment:
            return "fragment \"\(show(text.fragment))\" does not match \"\(rule.fragment?.source ?? "*")\"\(caseNote)"
        }
    }

    /// A path pattern written without its leading "/" that would match this path if it had one.
    static func missesOnlyTheLeadingSlash(_ rule: CompiledComponent, _ path: [UInt32]) -> Bool {
        guard let pattern = rule.path, let first = pattern.source.unicodeScalars.first, first != "/", first != "*",
            path.first == UInt32(UInt8(ascii: "/"))
        else { return false }
        let repaired = Pattern(pattern.source, caseSensitive: rule.caseSensitive, variables: { _ in nil })
        return repaired.matches(Array(path.dropFirst()))
    }
}
