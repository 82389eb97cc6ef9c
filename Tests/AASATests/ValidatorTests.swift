import Testing

@testable import AASA

@Suite("AASA validation rules")
struct ValidatorTests {
    static func findings(_ json: String) -> [Diagnostic] {
        AASAValidator.validateFile(Array(json.utf8)).diagnostics
    }

    /// A document with one details entry holding `entry` (a JSON fragment of keys).
    /// `working`: a second entry that opens URLs, so the first is not all the file does.
    static func entry(_ keys: String, applinks: String = "", working: Bool = false) -> String {
        let second = working ? #", {"appIDs": ["ABCDE12345.a.c"], "components": [{"/": "/works/*"}]}"# : ""
        return #"{"applinks": {\#(applinks)"details": [{\#(keys)}\#(second)]}}"#
    }

    static let app = #""appIDs": ["ABCDE12345.com.example.app"]"#

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var rule: String
        /// nil: the rule must not fire.
        var severity: Severity?
        var testDescription: String { "\(rule): \(name)" }
    }

    static let cases: [Case] = [
        Case(name: "root is an array", json: "[]", rule: "json.root-not-object", severity: .error),
        Case(name: "an empty object associates no app", json: "{}", rule: "document.no-app", severity: .error),
        Case(
            name: "empty details alone associate no app",
            json: #"{"applinks": {"details": []}}"#,
            rule: "document.no-app",
            severity: .error
        ),
        Case(
            name: "details naming no app in a file with no app",
            json: entry(#""appIDs": [], "components": [{"/": "/*"}]"#),
            rule: "document.no-app",
            severity: .error
        ),
        Case(name: "services without apps", json: #"{"webcredentials": {"apps": []}}"#, rule: "document.no-app", severity: .error),
        Case(
            name: "a component that constrains nothing",
            json: entry(app + #", "components": [{"comment": "all"}]"#),
            rule: "component.matches-everything",
            severity: .warning
        ),
        Case(
            name: "an exclusion that constrains nothing",
            json: entry(app + #", "components": [{"exclude": true}, {"/": "/a"}]"#),
            rule: "component.matches-everything",
            severity: .warning
        ),
        Case(name: "empty file", json: "", rule: "json.empty", severity: .error),
        Case(name: "mis-cased appId", json: entry(#""appId": "ABCDE12345.a.b", "paths": ["*"]"#), rule: "key.miscased", severity: .error),
        Case(name: "mis-cased appLinks", json: #"{"appLinks": {"details": []}}"#, rule: "key.miscased", severity: .error),
        Case(name: "typo applink", json: #"{"applink": {"details": []}}"#, rule: "key.unknown", severity: .error),
        Case(
            name: "unknown top-level key",
            json: #"{"applinks": {"details": []}, "zzzzzzzz": 1}"#,
            rule: "key.unknown",
            severity: .warning
        ),
        Case(
            name: "typo in component key",
            json: entry(app + #", "components": [{"exlude": true}]"#),
            rule: "key.unknown",
            severity: .error
        ),
        Case(
            name: "short prefix",
            json: entry(#""appIDs": ["W7JAY4CE8.me.wideboard"], "components": []"#),
            rule: "appid.format",
            severity: .error
        ),
        Case(name: "no prefix", json: entry(#""appID": "com.example.app", "paths": ["*"]"#), rule: "appid.format", severity: .error),
        Case(
            name: "underscore in bundle",
            json: entry(#""appID": "ABCDE12345.com.ex_ample", "paths": ["*"]"#),
            rule: "appid.format",
            severity: .error
        ),
        Case(
            name: "Xcode placeholder",
            json: entry(#""appID": "$(TeamIdentifierPrefix)com.a", "paths": ["*"]"#),
            rule: "appid.format",
            severity: .error
        ),
        Case(
            name: "lower-case prefix",
            json: entry(#""appID": "abcde12345.com.example", "paths": ["*"]"#),
            rule: "appid.prefix-lowercase",
            severity: .warning
        ),
        Case(
            name: "case-only duplicate",
            json: #"{"webcredentials": {"apps": ["ABCDE12345.com.App", "ABCDE12345.com.app"]}, "applinks": {"details": []}}"#,
            rule: "appid.case-duplicate",
            severity: .warning
        ),
        Case(
            name: "exclude as string",
            json: entry(app + #", "components": [{"/": "/a", "exclude": "true"}]"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "caseSensitive as number",
            json: entry(app + #", "components": [{"caseSensitive": 0}]"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "percentEncoded as string",
            json: entry(app + #", "components": [{"percentEncoded": "no"}]"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "query value not a string",
            json: entry(app + #", "components": [{"?": {"id": 5}}]"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(name: "query an array", json: entry(app + #", "components": [{"?": ["a"]}]"#), rule: "type.mismatch", severity: .error),
        Case(
            name: "paths item a number",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["/a", 3]"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "apps not an array",
            json: #"{"webcredentials": {"apps": "ABCDE12345.a.b"}, "applinks": {"details": []}}"#,
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "appIDs a string",
            json: entry(#""appIDs": "ABCDE12345.a.b", "components": []"#),
            rule: "type.mismatch",
            severity: .error
        ),
        Case(
            name: "details an object (WWDC15 form)",
            json: #"{"applinks": {"details": {"ABCDE12345.a.b": {"paths": ["*"]}}}}"#,
            rule: "details.dictionary",
            severity: .error
        ),
        Case(
            name: "non-empty apps",
            json: #"{"applinks": {"apps": ["ABCDE12345.a.b"], "details": []}}"#,
            rule: "applinks.apps-not-empty",
            severity: .warning
        ),
        Case(
            name: "appID with appIDs",
            json: entry(#""appID": "ABCDE12345.a.b", "appIDs": ["ABCDE12345.a.b"], "components": [{}]"#),
            rule: "details.appid-ignored",
            severity: .warning
        ),
        Case(
            name: "paths with components",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["*"], "components": [{}]"#),
            rule: "details.mixed-formats",
            severity: .warning
        ),
        Case(
            name: "empty details",
            json: #"{"applinks": {"details": []}, "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}"#,
            rule: "details.empty",
            severity: .warning
        ),
        // While another entry still opens URLs, an entry that opens nothing is a warning; alone, an error.
        Case(
            name: "empty components",
            json: entry(app + #", "components": []"#, working: true),
            rule: "components.empty",
            severity: .warning
        ),
        Case(name: "empty components alone", json: entry(app + #", "components": []"#), rule: "components.empty", severity: .error),
        Case(name: "no details key", json: #"{"applinks": {}}"#, rule: "applinks.details-missing", severity: .error),
        Case(name: "entry without app", json: entry(#""components": [{}]"#), rule: "details.no-app", severity: .warning),
        Case(name: "entry without rules", json: entry(app, working: true), rule: "details.no-rules", severity: .warning),
        Case(name: "entry without rules alone", json: entry(app), rule: "details.no-rules", severity: .error),
        Case(
            name: "only exclusions",
            json: entry(app + #", "components": [{"/": "/admin/*", "exclude": true}]"#),
            rule: "applinks.opens-nothing",
            severity: .error
        ),
        Case(
            name: "only exclusions, passwords still shared",
            json:
                #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.a.b"], "components": [{"/": "/a/*", "exclude": true}]}]}, "webcredentials": {"apps": ["ABCDE12345.a.b"]}}"#,
            rule: "applinks.opens-nothing",
            severity: nil
        ),
        Case(
            name: "exclusion after a broader include",
            json: entry(app + #", "components": [{"/": "/platform/*"}, {"/": "/platform/login", "exclude": true}]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "NOT after a broader path",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["/platform/*", "NOT /platform/login/*"]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "NOT without space",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["NOT/admin/*", "*"]"#),
            rule: "paths.not-syntax",
            severity: .error
        ),
        Case(
            name: "lower-case not",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["not /admin/*", "*"]"#),
            rule: "paths.not-syntax",
            severity: .error
        ),
        Case(
            name: "component path without slash",
            json: entry(app + #", "components": [{"/": "buy/*"}]"#),
            rule: "pattern.leading-slash",
            severity: .warning
        ),
        Case(
            name: "legacy path without slash",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["buy/*"]"#),
            rule: "pattern.leading-slash",
            severity: .warning
        ),
        Case(
            name: "query in path",
            json: entry(app + #", "components": [{"/": "/search?q=*"}]"#),
            rule: "pattern.query-in-path",
            severity: .warning
        ),
        Case(
            name: "fragment in path",
            json: entry(app + ##", "components": [{"/": "/page#top"}, {"/": "/other"}]"##),
            rule: "pattern.fragment-in-path",
            severity: .warning
        ),
        Case(
            name: "legacy path with a fragment, the only rule",
            json: entry(##""appID": "ABCDE12345.a.b", "paths": ["/page#top"]"##),
            rule: "pattern.fragment-in-path",
            severity: .error
        ),
        Case(
            name: "undefined variable",
            json: entry(app + #", "components": [{"/": "/$(food)/*"}]"#),
            rule: "variable.undefined",
            severity: .error
        ),
        Case(
            name: "mis-cased variable",
            json: entry(app + #", "components": [{"/": "/$(Food)/*"}]"#, applinks: #""substitutionVariables": {"food": ["taco"]}, "#),
            rule: "variable.miscased",
            severity: .error
        ),
        Case(
            name: "mis-cased predefined variable",
            json: entry(app + #", "components": [{"/": "/$(Lang)/*"}]"#),
            rule: "variable.miscased",
            severity: .error
        ),
        Case(
            name: "illegal variable name",
            json: entry(app + #", "components": [{"/": "/*"}]"#, applinks: #""substitutionVariables": {"a(b": ["x"]}, "#),
            rule: "variable.name-invalid",
            severity: .error
        ),
        Case(
            name: "variable referencing a variable",
            json: entry(app + #", "components": [{"/": "/$(a)"}]"#, applinks: #""substitutionVariables": {"a": ["$(lang)"]}, "#),
            rule: "variable.nested",
            severity: .error
        ),
        Case(
            name: "unused variable",
            json: entry(app + #", "components": [{"/": "/*"}]"#, applinks: #""substitutionVariables": {"food": ["taco"]}, "#),
            rule: "variable.unused",
            severity: .warning
        ),
        Case(
            name: "variable shadows predefined",
            json: entry(app + #", "components": [{"/": "/$(lang)"}]"#, applinks: #""substitutionVariables": {"lang": ["en"]}, "#),
            rule: "variable.shadows-builtin",
            severity: .warning
        ),
        Case(
            name: "rule after a catch-all",
            json: entry(app + #", "components": [{"/": "*"}, {"/": "/admin/*", "exclude": true}]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "duplicate rule",
            json: entry(app + #", "components": [{"/": "/a"}, {"/": "/a"}]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "legacy path after *",
            json: entry(#""appID": "ABCDE12345.a.b", "paths": ["*", "NOT /admin/*"]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "query * matches absent",
            json: entry(app + #", "components": [{"?": {"x": "*"}, "exclude": true}, {"/": "/*"}]"#),
            rule: "query.matches-absent",
            severity: .warning
        ),
        Case(
            name: "exclusion with * query shadows everything",
            json: entry(app + #", "components": [{"?": {"x": "*"}, "exclude": true}, {"/": "/*"}]"#),
            rule: "rule.unreachable",
            severity: .warning
        ),
        Case(
            name: "leading ? in whole query",
            json: entry(app + #", "components": [{"?": "?id=1"}]"#),
            rule: "query.leading-question-mark",
            severity: .warning
        ),
        Case(
            name: "appclips without applinks",
            json: #"{"appclips": {"apps": ["ABCDE12345.a.b.Clip"]}}"#,
            rule: "applinks.missing",
            severity: .warning
        ),
        Case(
            name: "service without apps",
            json: #"{"applinks": {"details": []}, "webcredentials": {}}"#,
            rule: "service.apps-missing",
            severity: .error
        ),
        Case(
            name: "undocumented key in defaults",
            json: #"{"applinks": {"defaults": {"exclude": true}, "details": []}}"#,
            rule: "defaults.undocumented-key",
            severity: .warning
        ),
        Case(name: "duplicate key", json: #"{"applinks": {"details": [], "details": []}}"#, rule: "json.duplicate-key", severity: .warning),
        Case(name: "UTF-8 BOM", json: "\u{FEFF}{\"applinks\": {\"details\": []}}", rule: "json.bom", severity: .error),
    ]

    @Test("Every rule fires on its example", arguments: cases)
    func rule(_ testCase: Case) throws {
        let found = Self.findings(testCase.json)
        guard testCase.severity != nil else {
            #expect(!found.contains { $0.rule == testCase.rule }, "\(found.map(\.rule))")
            return
        }
        let hit = try #require(
            found.first { $0.rule == testCase.rule },
            "expected \(testCase.rule); got \(found.map(\.rule))"
        )
        #expect(hit.severity == testCase.severity)
        #expect(!hit.message.isEmpty)
    }

    @Test("Repeats are found in long lists too (paths and app IDs beyond the first few dozen)")
    func repeatsInLongLists() throws {
        let paths = (0..<40).map { "\"/p\($0)\"" } + ["\"/p3\"", "\"/p39\""]
        let legacy = Self.findings(Self.entry(#""appID": "ABCDE12345.a.b", "paths": ["# + paths.joined(separator: ", ") + "]"))
        let repeats = legacy.filter { $0.rule == "rule.unreachable" }
        #expect(repeats.map(\.path) == ["$.applinks.details[0].paths[40]", "$.applinks.details[0].paths[41]"])
        #expect(repeats.first?.message.contains("at $.applinks.details[0].paths[3]") == true)

        let ids = (0..<40).map { "\"ABCDE12345.com.example.app\($0)\"" } + ["\"ABCDE12345.com.example.APP7\""]
        let cased = Self.findings(Self.entry(#""appIDs": ["# + ids.joined(separator: ", ") + #"], "components": [{"/": "/*"}]"#))
        let duplicate = try #require(cased.first { $0.rule == "appid.case-duplicate" })
        #expect(duplicate.message.contains("\"ABCDE12345.com.example.app7\""))
    }

    @Test(
        "Unreachable rules are found the same way in short entries (compared pairwise) and long ones (indexed)",
        arguments: [0, 30]
    )
    func unreachableShortAndLong(filler: Int) throws {
        let fillers = (0..<filler).map { #"{"/": "/filler\#($0)"}"# }
        let rules =
            [#"{"/": "/a", "?": {"q": "*"}}"#, #"{"/": "/a", "?": {"q": "1"}}"#, #"{"/": "/b", "caseSensitive": false}"#, #"{"/": "/b"}"#]
            + fillers + [#"{"/": "/*"}"#, #"{"/": "/c"}"#, #"{"/": "/a", "?": {"q": "2"}}"#]
        let found = Self.findings(Self.entry(Self.app + #", "components": ["# + rules.joined(separator: ", ") + "]"))
        let unreachable = found.filter { $0.rule == "rule.unreachable" }
        let last = 4 + filler
        // "/b" differs in case sensitivity from the earlier "/b", so it stays reachable.
        #expect(
            unreachable.map(\.path) == [
                "$.applinks.details[0].components[1]", "$.applinks.details[0].components[\(last + 1)]",
                "$.applinks.details[0].components[\(last + 2)]",
            ]
        )
        #expect(unreachable[0].message.contains("at $.applinks.details[0].components[0]"))
        // The third is shadowed by both the "/*" catch-all and the first "/a" rule: the earlier one is named.
        #expect(unreachable[2].message.contains("at $.applinks.details[0].components[0]"))
        #expect(found.filter { $0.rule == "query.matches-absent" }.count == 1)
    }

    @Test("Only a query pattern of nothing but '*' matches an absent item; a variable stands for a character")
    func matchesAbsent() {
        for (pattern, absent) in [
            ("*", true), ("**", true), ("", true), ("?*", false), ("$(alpha)", false), ("*$(digit)", false), ("a*", false),
        ] {
            let found = Self.findings(Self.entry(Self.app + #", "components": [{"/": "/x", "?": {"q": "\#(pattern)"}}]"#))
            #expect(found.contains { $0.rule == "query.matches-absent" } == absent, "\(pattern)")
        }
    }

    @Test("A clean modern document has no findings at all")
    func cleanDocument() {
        let json = #"""
            {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [
              {"#": "no_universal_links", "exclude": true}, {"/": "/buy/*"}, {"/": "/help/*", "?": {"articleNumber": "????"}}]}]},
             "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}
            """#
        #expect(Self.findings(json).isEmpty)
    }

    @Test("Findings carry line:column and JSON path of the offending value")
    func locations() throws {
        let json = """
            {"applinks": {"details": [
              {"appIDs": ["ABCDE12345.com.example.app", "bad"],
               "components": [{"/": "/a", "exclude": "true"}]}]}}
            """
        let found = Self.findings(json)
        let appID = try #require(found.first { $0.rule == "appid.format" })
        #expect(appID.location?.line == 2)
        #expect(appID.location?.column == 45)
        #expect(appID.path == "$.applinks.details[0].appIDs[1]")
        let type = try #require(found.first { $0.rule == "type.mismatch" })
        #expect(type.path == "$.applinks.details[0].components[0].exclude")
        #expect(type.message.contains("found a string"))
        #expect(type.message.contains("without quotes"))
    }

    @Test("Unknown keys suggest the closest valid key")
    func suggestions() throws {
        let found = Self.findings(Self.entry(#""appIDS": ["ABCDE12345.a.b"], "components": []"#))
        let miscased = try #require(found.first { $0.rule == "key.miscased" })
        #expect(miscased.message.contains("\"appIDs\""))
        let typo = Self.findings(Self.entry(#""apIDs": ["ABCDE12345.a.b"], "components": []"#))
        #expect(typo.first { $0.rule == "key.unknown" }?.message.contains("did you mean \"appIDs\"?") == true)
    }

    @Test("Size: error above 128 KiB naming the biggest parts, warning from 100 KiB, silent below")
    func sizeLimit() throws {
        #expect(AASAValidator.validateSize(50_000).isEmpty)
        #expect(AASAValidator.validateSize(110_000).first?.rule == "size.near-limit")
        #expect(AASAValidator.validateSize(131_072).first?.severity == .warning)
        let over = try #require(AASAValidator.validateSize(131_073, contributors: [("details[0]", 100_000), ("vars", 31_000)]).first)
        #expect(over.rule == "size.limit")
        #expect(over.severity == .error)
        #expect(over.message.contains("131073 bytes"))
        #expect(over.message.contains("details[0]"))
        // A real oversized file goes through the same check.
        let paths = (0..<6000).map { "\"/section/\($0)/page/*\"" }.joined(separator: ",")
        let big = #"{"applinks": {"details": [{"appID": "ABCDE12345.a.b", "paths": [\#(paths)]}]}}"#
        #expect(Self.findings(big).contains { $0.rule == "size.limit" })
    }

    @Test("Reachability in entries past 16 components (indexed by path hash) names the earliest shadowing rule, as a plain scan does")
    func indexedReachabilityAgrees() {
        var random = SplitMix(seed: 7)
        let paths: [String?] = ["/a", "/a/*", "/b", "/B", "*", "/*", "/c/?", "/d/*/e", nil]
        for _ in 0..<300 {
            let count = 17 + Int(random.next() % 40)
            let components = (0..<count).map { position in
                var component = Component()
                component.path = paths[Int(random.next() % UInt64(paths.count))]
                component.exclude = random.next() % 4 == 0
                if random.next() % 5 == 0 { component.options.caseSensitive = false }
                component.origin = Provenance(
                    SourceLocation(offset: position * 10, line: position + 1, column: 1),
                    JSONPath.root.index(position)
                )
                return component
            }
            // The same candidates, found by comparing strings with every earlier rule.
            var expected: [(later: Int, earlier: Int)] = []
            for (position, later) in components.enumerated() {
                let earlier = components[..<position].indices
                func firstShadowing(_ candidates: [Int]) -> Int? {
                    candidates.first { AASAValidator.shadows(components, $0, position, inherited: MatchOptions()) }
                }
                let indexed = earlier.filter {
                    AASAValidator.isPathCatchAll(components[$0].path)
                        || (components[$0].path != nil && components[$0].path == later.path)
                }
                var found = firstShadowing(indexed)
                let includes = earlier.filter { !components[$0].exclude }
                let exclusionsBefore = earlier.filter { components[$0].exclude }.count
                if found == nil, later.exclude, includes.count * exclusionsBefore < 1_000_000 { found = firstShadowing(includes) }
                if let found { expected.append((position, found)) }
            }
            var reported: [(later: Int, message: String)] = []
            AASAValidator.checkReachability(components, inherited: MatchOptions()) { _, rule, message, origin in
                if rule == "rule.unreachable" { reported.append(((origin.location?.offset ?? -1) / 10, message)) }
            }
            #expect(reported.map(\.later) == expected.map(\.later))
            for (found, wanted) in zip(reported, expected) {
                #expect(found.message.contains("(at $[\(wanted.earlier)])"), "\(found.message)")
            }
        }
    }

    @Test("The fast app-ID and host checks agree with the explaining ones on random input")
    func fastPathsAgree() {
        var random = SplitMix(seed: 99)
        let alphabet = Array("AB9a.-_*x ".unicodeScalars)
        for _ in 0..<20_000 {
            let length = 8 + Int(random.next() % 12)
            let text = String(String.UnicodeScalarView((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
            let id = "ABCDE12345" + text.dropFirst(10)
            for candidate in [text, id] where AASAValidator.isWellFormedAppID(candidate) {
                var findings = 0
                AASAValidator.explainAppID(Located(candidate)) { _, _, _, _ in findings += 1 }
                #expect(findings == 0, "fast path accepted \(candidate) but the detailed checks object")
            }
            let host = text.lowercased()
            if let fast = HostPattern.parsePlain(host) {
                #expect(HostPattern.hostNameProblem(host.hasPrefix("*.") ? String(host.dropFirst(2)) : host) == nil, "\(host)")
                #expect(fast.description == host)
            }
        }
    }

    /// The byte-by-byte form of the plain-host check, the one the run-based scan replaced.
    static func plainShapeByteByByte(_ bytes: [UInt8]) -> Bool? {
        let count = bytes.count
        guard count > 0, count <= 253 else { return nil }
        let wildcard = count > 2 && bytes[0] == UInt8(ascii: "*") && bytes[1] == UInt8(ascii: ".")
        var labelLength = 0
        var labels = 0
        var last: UInt8 = 0
        for byte in bytes[(wildcard ? 2 : 0)...] {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): labelLength += 1
            case UInt8(ascii: "-"):
                if labelLength == 0 { return nil }
                labelLength += 1
            case UInt8(ascii: "."):
                if labelLength == 0 || last == UInt8(ascii: "-") { return nil }
                labels += 1
                labelLength = 0
            default: return nil
            }
            if labelLength > 63 { return nil }
            last = byte
        }
        guard labelLength > 0, last != UInt8(ascii: "-") else { return nil }
        return wildcard && labels < 1 ? nil : wildcard
    }

    @Test(
        "The plain-host scan gives the byte-by-byte verdict: random hosts, labels of 62 to 64 bytes, 253 and 254 bytes, hyphens and dots at every end"
    )
    func plainHostScan() {
        var random = SplitMix(seed: 7)
        let alphabet = Array("ab09-.*_A".utf8)
        var cases: [[UInt8]] = ["", "a", "-", ".", "*.", "*.a", "*.a.b", "a.", ".a", "a..b", "a-.b", "a.-b", "a-b.c", "*.*.a", "a*"].map {
            Array($0.utf8)
        }
        for length in [62, 63, 64] {
            cases.append(Array(repeating: UInt8(ascii: "x"), count: length) + Array(".example".utf8))
        }
        let label = Array(repeating: UInt8(ascii: "y"), count: 62) + [UInt8(ascii: ".")]
        cases.append(Array((label + label + label + label).prefix(253)))
        cases.append(Array((label + label + label + label + label).prefix(254)))
        for _ in 0..<50_000 {
            let length = 1 + Int(random.next() % 24)
            cases.append((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            cases.append(Array("*.".utf8) + (0..<length).map { _ in alphabet[Int(random.next() % 4)] })
        }
        for bytes in cases {
            let scanned = bytes.withUnsafeBufferPointer { HostPattern.plainShape($0) }
            #expect(scanned == Self.plainShapeByteByByte(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test("Empty details next to a service that names an app is only a warning: password autofill without links is legitimate")
    func emptyDetailsWithCredentials() {
        let findings = Self.findings(#"{"applinks": {"details": []}, "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}"#)
        #expect(findings.map(\.rule) == ["details.empty"])
        #expect(findings.first?.severity == .warning)
        // An entry without apps next to one with an app: the entry is a warning, the file is fine.
        let mixed = Self.findings(Self.entry(Self.app + #", "components": [{"/": "/a"}]}, {"appIDs": [], "components": [{"/": "/b"}]"#))
        #expect(mixed.contains { $0.rule == "details.no-app" && $0.severity == .warning })
        #expect(!mixed.contains { $0.rule == "document.no-app" })
    }
}
