import Testing

@testable import AASA

@Suite("URL matching")
struct MatcherTests {
    private func matcher(_ json: String) throws -> Matcher {
        let decoded = AASADecoder.decode(Array(json.utf8))
        let errors = decoded.diagnostics.filter { $0.severity == .error }
        #expect(errors.isEmpty, "fixture should decode: \(errors)")
        return Matcher(try #require(decoded.document))
    }

    private func app(_ matcher: Matcher, _ url: String) -> String? { matcher.match(url).app }

    /// Wraps components in a one-app document.
    private func components(_ components: String, defaults: String = "", variables: String = "") throws -> Matcher {
        let defaultsPart = defaults.isEmpty ? "" : "\"defaults\": \(defaults),"
        let variablesPart = variables.isEmpty ? "" : "\"substitutionVariables\": \(variables),"
        return try matcher(
            """
            {"applinks": {\(defaultsPart)\(variablesPart) "details": [
              {"appIDs": ["ABCDE12345.com.example.app"], "components": \(components)}]}}
            """
        )
    }

    @Test("Apple's Components example: exclusions first, then /buy/*, then /help/* with a 4-character articleNumber")
    func appleComponentsExample() throws {
        // From Apple's "Supporting associated domains" sample (docs/aasa-format.md §3).
        let matcher = try components(
            """
            [{"#": "no_universal_links", "exclude": true},
             {"/": "/buy/*"},
             {"/": "/help/website/*", "exclude": true},
             {"/": "/help/*", "?": {"articleNumber": "????"}}]
            """
        )
        #expect(app(matcher, "https://example.com/buy/shoes") != nil)
        #expect(app(matcher, "https://example.com/buy/shoes#no_universal_links") == nil)
        #expect(app(matcher, "https://example.com/buy") == nil, "/buy/* needs the slash after buy")
        #expect(app(matcher, "https://example.com/help/website/faq") == nil)
        #expect(app(matcher, "https://example.com/help/faq?articleNumber=1234") != nil)
        #expect(app(matcher, "https://example.com/help/faq?articleNumber=12345") == nil)
        #expect(app(matcher, "https://example.com/help/faq") == nil)
        let excluded = matcher.match("https://example.com/help/website/a")
        #expect(excluded.decidedBy?.ruleIndex == 2)
        #expect(excluded.decidedBy?.exclude == true)
    }

    @Test("Wildcards: * is zero or more, ? exactly one, ?* at least one; patterns are anchored")
    func wildcards() throws {
        let star = try components(#"[{"/": "/a*"}]"#)
        #expect(app(star, "https://x.com/a") != nil)
        #expect(app(star, "https://x.com/abc/def") != nil)
        #expect(app(star, "https://x.com/ba") == nil)
        let one = try components(#"[{"/": "/p/?"}]"#)
        #expect(app(one, "https://x.com/p/1") != nil)
        #expect(app(one, "https://x.com/p/") == nil)
        #expect(app(one, "https://x.com/p/12") == nil)
        let oneOrMore = try components(#"[{"/": "/p/?*"}]"#)
        #expect(app(oneOrMore, "https://x.com/p/") == nil)
        #expect(app(oneOrMore, "https://x.com/p/1") != nil)
        #expect(app(oneOrMore, "https://x.com/p/123/4") != nil)
        let middle = try components(#"[{"/": "/*/search"}]"#)
        #expect(app(middle, "https://x.com/en/search") != nil)
        #expect(app(middle, "https://x.com/en/search/x") == nil)
        let exact = try components(#"[{"/": "/help"}]"#)
        #expect(app(exact, "https://x.com/help") != nil)
        #expect(app(exact, "https://x.com/help/") == nil, "a trailing slash is significant")
    }

    @Test("Unspecified components match anything; an empty URL path is /")
    func defaultsToStar() throws {
        let any = try components(#"[{}]"#)
        #expect(app(any, "https://x.com") != nil)
        let root = try components(#"[{"/": "/"}]"#)
        #expect(app(root, "https://x.com") != nil)
        #expect(app(root, "https://x.com/") != nil)
        #expect(app(root, "https://x.com/a") == nil)
    }

    @Test("Query string form matches the whole query (swcutil: key=value does not match key=value&extra=value)")
    func wholeQuery() throws {
        let matcher = try components(#"[{"/": "/abc", "?": "def"}]"#)
        #expect(app(matcher, "https://www.example.com/abc?def") != nil)
        #expect(app(matcher, "https://www.example.com/abc?def&x") == nil)
        #expect(app(matcher, "https://www.example.com/abc") == nil)
        let keyValue = try components(#"[{"?": "key=value"}]"#)
        #expect(app(keyValue, "https://x.com/?key=value") != nil)
        #expect(app(keyValue, "https://x.com/?key=value&extra=value") == nil)
    }

    @Test("Query dictionary: every key must match, extra items are ignored, order does not matter")
    func queryDictionary() throws {
        let matcher = try components(#"[{"?": {"articleNumber": "????", "articleName": "?*"}}]"#)
        #expect(app(matcher, "https://x.com/?articleNumber=1234&articleName=swift") != nil)
        #expect(app(matcher, "https://x.com/?articleName=swift&other=1&articleNumber=1234") != nil)
        #expect(app(matcher, "https://x.com/?articleNumber=1234") == nil)
        #expect(app(matcher, "https://x.com/?articleNumber=123&articleName=swift") == nil)
        let productID = try components(#"[{"?": {"productID": "12345"}}]"#)
        #expect(app(productID, "https://x.com/p?productID=12345") != nil)
        #expect(app(productID, "https://x.com/p?productID=12345&extra=value") != nil)
    }

    @Test("An absent query item counts as the empty string: '*' matches it, '?*' does not (element-call trap)")
    func absentItems() throws {
        let before = try components(
            #"[{"?": {"no_universal_links": "*"}, "exclude": true}, {"/": "/*"}]"#
        )
        #expect(app(before, "https://call.element.io/room") == nil, "the '*' exclusion blocks every URL")
        let after = try components(
            #"[{"?": {"no_universal_links": "?*"}, "exclude": true}, {"/": "/*"}]"#
        )
        #expect(app(after, "https://call.element.io/room") != nil)
        #expect(app(after, "https://call.element.io/room?no_universal_links=1") == nil)
        #expect(app(after, "https://call.element.io/room?no_universal_links") != nil, "an item without a value is empty")
        let empty = try components(#"[{"?": {"x": ""}}]"#)
        #expect(app(empty, "https://a.com/") != nil)
        #expect(app(empty, "https://a.com/?x=") != nil)
        #expect(app(empty, "https://a.com/?x=1") == nil)
    }

    @Test("Repeated query names: every occurrence must match (WWDC19)")
    func repeatedNames() throws {
        let matcher = try components(#"[{"?": {"id": "$(digit)$(digit)"}}]"#)
        #expect(app(matcher, "https://a.com/?id=12&id=34") != nil)
        #expect(app(matcher, "https://a.com/?id=12&id=x4") == nil)
    }

    @Test("Fragment patterns; a URL without a fragment only matches patterns that accept an empty one")
    func fragments() throws {
        let matcher = try components(##"[{"#": "*market/lettings*"}]"##)
        #expect(app(matcher, "https://example.com/#/market/lettings/1") != nil)
        #expect(app(matcher, "https://example.com/") == nil)
        let star = try components(##"[{"#": "*"}]"##)
        #expect(app(star, "https://example.com/") != nil)
    }

    @Test("caseSensitive at component, details-defaults and applinks-defaults level; the most specific wins")
    func caseSensitivity() throws {
        let component = try components(#"[{"/": "/search/*", "caseSensitive": false}]"#)
        #expect(app(component, "https://a.com/SEARCH/x") != nil)
        let sensitive = try components(#"[{"/": "/search/*"}]"#)
        #expect(app(sensitive, "https://a.com/SEARCH/x") == nil)
        let domain = try components(##"[{"/": "/search/*"}, {"#": "Top"}]"##, defaults: ##"{"caseSensitive": false}"##)
        #expect(app(domain, "https://a.com/Search/x") != nil)
        #expect(app(domain, "https://a.com/other#TOP") != nil, "fragments ignore case too")
        let overridden = try components(
            #"[{"/": "/search/*", "caseSensitive": true}]"#,
            defaults: #"{"caseSensitive": false}"#
        )
        #expect(app(overridden, "https://a.com/Search/x") == nil)
        let detailsLevel = try matcher(
            """
            {"applinks": {"defaults": {"caseSensitive": true}, "details": [{"appIDs": ["ABCDE12345.a.b"],
              "defaults": {"caseSensitive": false}, "components": [{"/": "/a"}]}]}}
            """
        )
        #expect(app(detailsLevel, "https://a.com/A") != nil)
    }

    @Test("percentEncoded: patterns compare with the encoded URL by default, decoded Unicode when false")
    func percentEncoding() throws {
        let decoded = try components(#"[{"/": "/哈哈/?*", "percentEncoded": false}]"#)
        #expect(app(decoded, "https://a.com/%E5%93%88%E5%93%88/1") != nil)
        #expect(app(decoded, "https://a.com/哈哈/1") != nil)
        let encoded = try components(#"[{"/": "/%E5%93%88/*"}]"#)
        #expect(app(encoded, "https://a.com/%E5%93%88/x") != nil)
        #expect(app(encoded, "https://a.com/哈/x") != nil, "non-ASCII input is encoded before comparing")
        let literalUnicode = try components(#"[{"/": "/哈/*"}]"#)
        #expect(app(literalUnicode, "https://a.com/%E5%93%88/x") == nil)
        let oneChar = try components(#"[{"/": "/?", "percentEncoded": false}]"#)
        #expect(app(oneChar, "https://a.com/%C3%A9") != nil, "? is one decoded character")
    }

    @Test("Substitution variables: Apple's $(lang)_$(region)/$(food) example, with an exclusion placed first (WWDC20)")
    func substitutionVariables() throws {
        let matcher = try components(
            #"[{"/": "/$(lang)_CA/$(food)/", "exclude": true}, {"/": "/$(lang)_$(region)/$(food)/"}]"#,
            variables: #"{"food": ["burrito", "pizza", "sushi", "samosa"]}"#
        )
        #expect(app(matcher, "https://a.com/en_US/sushi/") != nil)
        #expect(app(matcher, "https://a.com/fr_FR/pizza/") != nil)
        #expect(app(matcher, "https://a.com/fr_CA/pizza/") == nil)
        #expect(app(matcher, "https://a.com/en_US/tacos/") == nil)
        #expect(app(matcher, "https://a.com/xx_US/sushi/") == nil)
        #expect(app(matcher, "https://a.com/en_ZZ/sushi/") == nil)
    }

    @Test("Predefined character classes match exactly one character each")
    func builtinClasses() throws {
        let digits = try components(#"[{"/": "/$(digit)$(digit)"}]"#)
        #expect(app(digits, "https://a.com/42") != nil)
        #expect(app(digits, "https://a.com/4") == nil)
        #expect(app(digits, "https://a.com/4a") == nil)
        let classes = try components(#"[{"/": "/$(alpha)$(upper)$(lower)$(alnum)$(xdigit)"}]"#)
        #expect(app(classes, "https://a.com/aBc9f") != nil)
        #expect(app(classes, "https://a.com/abc9f") == nil, "$(upper) rejects a lower-case letter")
        #expect(app(classes, "https://a.com/aBc9g") == nil, "$(xdigit) rejects g")
        let insensitive = try components(#"[{"/": "/$(upper)", "caseSensitive": false}]"#)
        #expect(app(insensitive, "https://a.com/q") != nil)
    }

    @Test("Variable values may contain wildcards; user variables shadow predefined ones")
    func variableValuesWithWildcards() throws {
        let matcher = try components(
            #"[{"/": "/$(section)/$(lang)"}]"#,
            variables: #"{"section": ["docs*", "api?"], "lang": ["swift"]}"#
        )
        #expect(app(matcher, "https://a.com/docs/swift") != nil)
        #expect(app(matcher, "https://a.com/docs-v2/swift") != nil)
        #expect(app(matcher, "https://a.com/api1/swift") != nil)
        #expect(app(matcher, "https://a.com/api/swift") == nil)
        #expect(app(matcher, "https://a.com/docs/en") == nil, "user-defined lang replaces the ISO list")
    }

    @Test("An undefined variable matches only its own literal text")
    func undefinedVariable() throws {
        let matcher = try components(#"[{"/": "/$(nope)/x"}]"#)
        #expect(app(matcher, "https://a.com/$(nope)/x") != nil)
        #expect(app(matcher, "https://a.com/a/x") == nil)
    }

    @Test("Legacy paths: NOT excludes, first match wins, query and fragment are ignored")
    func legacyPaths() throws {
        let matcher = try matcher(
            """
            {"applinks": {"apps": [], "details": [{"appID": "ABCDE12345.com.example.app",
              "paths": ["NOT /videos/wwdc/2010/*", "/videos/wwdc/201?/*", "/help"]}]}}
            """
        )
        #expect(app(matcher, "https://a.com/videos/wwdc/2015/x") != nil)
        #expect(app(matcher, "https://a.com/videos/wwdc/2010/x") == nil)
        #expect(app(matcher, "https://a.com/help?x=1#y") != nil)
        #expect(app(matcher, "https://a.com/Help") == nil)
        #expect(matcher.match("https://a.com/help").decidedBy?.kind == .path)
    }

    @Test("components win over paths in the same entry; appID is ignored when appIDs is present")
    func mixedEntries() throws {
        let matcher = try matcher(
            """
            {"applinks": {"details": [{"appID": "AAAAAAAAAA.ignored", "appIDs": ["BBBBBBBBBB.used"],
              "paths": ["/legacy/*"], "components": [{"/": "/modern/*"}]}]}}
            """
        )
        #expect(app(matcher, "https://a.com/modern/1") == "BBBBBBBBBB.used")
        #expect(app(matcher, "https://a.com/legacy/1") == nil)
    }

    @Test("Across entries the first decision wins: an app excluded in entry 1 stays excluded; other apps still match")
    func acrossEntries() throws {
        let matcher = try matcher(
            """
            {"applinks": {"details": [
              {"appIDs": ["AAAAAAAAAA.first"], "components": [{"/": "/a/*", "exclude": true}, {"/": "/b/*"}]},
              {"appIDs": ["AAAAAAAAAA.first", "BBBBBBBBBB.second"], "components": [{"/": "*"}]}]}}
            """
        )
        let excludedFirst = matcher.match("https://a.com/a/1")
        #expect(excludedFirst.app == "BBBBBBBBBB.second")
        #expect(excludedFirst.blockedApps == ["AAAAAAAAAA.first"])
        #expect(excludedFirst.decidedBy?.detailsIndex == 1)
        #expect(app(matcher, "https://a.com/b/1") == "AAAAAAAAAA.first")
        #expect(app(matcher, "https://a.com/c") == "AAAAAAAAAA.first")
        // swcutil-tested direction: entry 1 matches, entry 2 excludes → match.
        let matchThenExclude = try self.matcher(
            """
            {"applinks": {"details": [
              {"appIDs": ["AAAAAAAAAA.app"], "components": [{"/": "/x"}]},
              {"appIDs": ["AAAAAAAAAA.app"], "components": [{"/": "/x", "exclude": true}]}]}}
            """
        )
        #expect(app(matchThenExclude, "https://a.com/x") == "AAAAAAAAAA.app")
    }

    @Test("A miss names the closest rule and the part that failed")
    func explainsMisses() throws {
        let matcher = try components(
            #"[{"/": "/admin/*", "exclude": true}, {"/": "/product/*", "?": {"id": "?*"}}, {"/": "/cart"}]"#
        )
        let noQuery = matcher.match("https://a.com/product/1")
        #expect(noQuery.app == nil)
        #expect(noQuery.decidedBy == nil)
        #expect(noQuery.closest?.rule.ruleIndex == 1)
        #expect(noQuery.closest?.reason.contains("\"id\" is absent") == true)
        let wrongPath = matcher.match("https://a.com/produc")
        #expect(wrongPath.closest?.rule.ruleIndex == 1)
        #expect(wrongPath.closest?.reason == "path \"/produc\" does not match \"/product/*\"")
    }

    @Test("Pattern engine agrees with a brute-force reference on random inputs")
    func patternProperty() {
        var generator = SplitMix(seed: 42)
        let alphabet: [Character] = ["a", "b", "/"]
        for _ in 0..<3000 {
            let pattern = String((0..<Int(generator.next() % 6)).map { _ in ["a", "b", "*", "?", "/"][Int(generator.next() % 5)] })
            let text = String((0..<Int(generator.next() % 7)).map { _ in alphabet[Int(generator.next() % 3)] })
            let compiled = Pattern(pattern, caseSensitive: true) { _ in nil }
            let viaVariable = Pattern("$(v)", caseSensitive: true) { _ in [pattern, "\u{0}never"] }
            let expected = referenceMatch(Array(pattern), Array(text))
            let scalars = text.unicodeScalars.map(\.value)
            #expect(compiled.matches(scalars) == expected, "glob \(pattern) vs \(text)")
            #expect(compiled.matches(bytes: Array(text.utf8)[...], fold: false) == expected, "bytes \(pattern) vs \(text)")
            #expect(viaVariable.matches(scalars) == expected, "nfa \(pattern) vs \(text)")
        }
    }

    private func referenceMatch(_ pattern: [Character], _ text: [Character]) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case "*": return (0...text.count).contains { referenceMatch(Array(pattern.dropFirst()), Array(text.dropFirst($0))) }
        case "?": return !text.isEmpty && referenceMatch(Array(pattern.dropFirst()), Array(text.dropFirst()))
        default: return text.first == first && referenceMatch(Array(pattern.dropFirst()), Array(text.dropFirst()))
        }
    }
}

/// A tiny deterministic generator, so property tests are reproducible.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("match: what can never be a universal link, iOS 12's reading, patterns that cannot match")
struct MatchReadingTests {
    static let document = AASADecoder.decode(
        Array(
            #"""
            {"applinks": {"details": [
              {"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/admin/*", "exclude": true}, {"/": "/new/*"}]},
              {"appID": "ABCDE12345.com.example.app", "paths": ["NOT /admin/*", "/old/*"]}
            ]}}
            """#.utf8
        )
    ).document!

    @Test("Only http and https URLs are links; text without a scheme is told to write one")
    func schemes() {
        let matcher = Matcher(Self.document)
        #expect(matcher.match("https://example.com/new/1").app == "ABCDE12345.com.example.app")
        #expect(matcher.match("http://example.com/new/1").app == "ABCDE12345.com.example.app")
        let ftp = matcher.match("ftp://example.com/new/1")
        #expect(ftp.app == nil && ftp.notALink?.contains("only http and https") == true)
        let bare = matcher.match("example.com/new/1")
        #expect(bare.app == nil && bare.notALink?.contains("write https://example.com/new/1") == true)
        #expect(matcher.match("mailto:someone@example.com").notALink != nil)
    }

    @Test("iOS 12 reads only appID + paths: the legacy entries decide, the components are invisible")
    func legacyReading() {
        let legacy = Matcher(Self.document, reading: .legacy)
        let modern = Matcher(Self.document)
        #expect(legacy.match("https://example.com/old/1").app == "ABCDE12345.com.example.app")
        #expect(legacy.match("https://example.com/old/1").decidedBy?.kind == .path)
        #expect(legacy.match("https://example.com/new/1").app == nil, "components are unknown to iOS 12")
        #expect(legacy.match("https://example.com/admin/x").decidedBy?.pattern == "NOT /admin/*")
        // iOS 13+ takes the first entry's components and never reaches the legacy paths for /new/.
        #expect(modern.match("https://example.com/new/1").decidedBy?.kind == .component)
    }

    @Test("A path pattern written without its leading slash is the closest rule, with why it can never match")
    func leadingSlash() {
        let document = AASADecoder.decode(
            Array(
                #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.a.b"], "components": [{"/": "/other"}, {"/": "product/*"}]}]}}"#
                    .utf8
            )
        ).document!
        let outcome = Matcher(document).match("https://example.com/product/1")
        #expect(outcome.app == nil)
        #expect(outcome.closest?.rule.ruleIndex == 1)
        #expect(outcome.closest?.reason.contains("has no leading \"/\"") == true)
        #expect(outcome.closest?.reason.contains("write \"/product/*\"") == true)
    }
}
