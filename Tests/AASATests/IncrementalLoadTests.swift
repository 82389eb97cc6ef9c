import Dispatch
import Support
import Testing

@testable import AASA

/// A reload takes over the sites whose bytes did not change; what it produces must be exactly what a full
/// load of the new text produces.
@Suite("Incremental reload: unchanged sites taken over")
struct IncrementalLoadTests {
    static let path = "dir/config.json"

    static func load(
        _ json: String,
        files: [String: String] = [:],
        reusing previous: LoadedConfig? = nil,
        parallel: ParallelFor? = nil
    ) -> LoadedConfig {
        ConfigLoader.load(
            configBytes: Array(json.utf8),
            configPath: path,
            readFile: { file in files[file].map { .success(Array($0.utf8)) } ?? .failure(FileReadError("no such file")) },
            reusing: previous,
            parallel: parallel
        )
    }

    /// Real threads, as the server uses: results must not depend on them.
    static let threads: ParallelFor = { count, body in DispatchQueue.concurrentPerform(iterations: count) { body($0) } }

    /// A site whose legacy form loses its query rule: every such site carries a warning, which must move.
    static func site(_ number: Int, product: String = "product", multiline: Bool = false) -> String {
        let separator = multiline ? "\n    " : " "
        return
            #"{"hosts": ["shop\#(number).example.com", "www.shop\#(number).example.com"],\#(separator)"applinks": {"formats": ["modern", "legacy"], "details": [{"apps": ["shop"],\#(separator)"components": [{"/": "/\#(product)/\#(number)/*"}, {"/": "/cart", "?": {"id": "?*"}}]}]}}"#
    }

    static func config(_ sites: [String], team: String = "ABCDE12345") -> String {
        "{\"version\": 1, \"apps\": {\"shop\": \"\(team).com.example.shop\"},\n \"sites\": [\n  "
            + sites.joined(separator: ",\n  ") + "\n]}\n"
    }

    /// Everything observable about a load, for comparing an incremental load with a full one.
    static func summary(_ loaded: LoadedConfig) -> [String] {
        loaded.diagnostics.sortedForDisplay().map(\.description)
            + loaded.sites.map { String(decoding: $0.bytes, as: UTF8.self) }
            + loaded.sites.flatMap {
                $0.site.hosts.map { host in "\(host.value) -> \(loaded.site(forHost: host.value.description)?.site.name ?? "-")" }
            }
    }

    @Test("Sites inserted, edited, removed and moved: same result as a full load, unchanged sites taken over")
    func equivalence() throws {
        let before = Self.load(Self.config((0..<6).map { Self.site($0) }))
        #expect(!before.hasErrors)
        #expect(before.diagnostics.contains { $0.rule.hasPrefix("legacy") })
        // A multi-line site inserted first (every later site moves down lines and indices), site 2 edited,
        // site 4 removed.
        let afterSites = [Self.site(9, multiline: true)] + [0, 1, 3, 5].map { Self.site($0) } + [Self.site(2, product: "item")]
        let text = Self.config(afterSites)
        let full = Self.load(text)
        let incremental = Self.load(text, reusing: before)
        #expect(!full.hasErrors)
        #expect(Self.summary(incremental) == Self.summary(full))
        #expect(incremental.diagnostics.count == full.diagnostics.count)
        // Sites 0, 1, 3 and 5 are the very objects of the first load; 9 and the edited 2 are new.
        let previous = Dictionary(uniqueKeysWithValues: before.sites.map { ($0.site.name, $0) })
        for loaded in incremental.sites {
            let name = loaded.site.name
            let expectTakenOver = ["shop0.example.com", "shop1.example.com", "shop3.example.com", "shop5.example.com"].contains(name)
            #expect((previous[name] === loaded) == expectTakenOver, "\(name)")
        }
        // And the next load reuses from the incremental one just as well.
        let again = Self.load(text, reusing: incremental)
        #expect(Self.summary(again) == Self.summary(full))
        #expect(zip(again.sites, incremental.sites).allSatisfy { $0 === $1 })
    }

    @Test("Moved findings name the new line, column and site index")
    func movedFindings() throws {
        let before = Self.load(Self.config([Self.site(1)]))
        let warning = try #require(before.diagnostics.first { $0.rule.hasPrefix("legacy") })
        #expect(warning.path?.hasPrefix("$.sites[0]") == true)
        let text = Self.config([Self.site(7, multiline: true), Self.site(8), Self.site(1)])
        let incremental = Self.load(text, reusing: before)
        let moved = try #require(incremental.diagnostics.first { $0.rule == warning.rule && $0.path?.hasPrefix("$.sites[2]") == true })
        let fresh = try #require(Self.load(text).diagnostics.first { $0.rule == warning.rule && $0.path?.hasPrefix("$.sites[2]") == true })
        #expect(moved.location == fresh.location)
        // Two sites before it now: the first spans three lines, the second one.
        #expect(moved.location?.line == warning.location.map { $0.line + 4 })
        #expect(moved.message == fresh.message)
    }

    @Test("A changed app name re-generates every site")
    func changedApps() throws {
        let before = Self.load(Self.config([Self.site(1), Self.site(2)]))
        let after = Self.load(Self.config([Self.site(1), Self.site(2)], team: "FGHIJ67890"), reusing: before)
        #expect(after.sites.allSatisfy { String(decoding: $0.bytes, as: UTF8.self).contains("FGHIJ67890.com.example.shop") })
        #expect(zip(after.sites, before.sites).allSatisfy { $0 !== $1 })
    }

    @Test("Errors are reported from the text as it is now, and nothing is reused from a config with errors")
    func errors() throws {
        let before = Self.load(Self.config([Self.site(1), Self.site(2)]))
        // Site 2 moves down a line and its host duplicates site 1's: the message must point at line 5.
        let text = Self.config([Self.site(1), #"{"hosts": ["x.example.com"], "webcredentials": {"apps": ["shop"]}}"#, Self.site(1)])
        let incremental = Self.load(text, reusing: before)
        let full = Self.load(text)
        #expect(incremental.hasErrors)
        #expect(Self.summary(incremental) == Self.summary(full))
        let duplicate = try #require(incremental.diagnostics.first { $0.rule == "host.duplicate" })
        #expect(duplicate.location?.line == 5)
        #expect(duplicate.message.contains("$.sites[0]"))
        #expect(incremental.reuse == nil)
    }

    @Test("A verbatim site is rebuilt when its hosted file changes, though the config did not")
    func hostedFile() throws {
        let text = Self.config([#"{"hosts": ["example.com"], "file": "aasa.json"}"#])
        let first = #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.one"], "components": [{"/": "/*"}]}]}}"#
        let second = first.replacingAll("one", with: "two")
        let before = Self.load(text, files: ["dir/aasa.json": first])
        let same = Self.load(text, files: ["dir/aasa.json": first], reusing: before)
        #expect(same.sites[0] === before.sites[0])
        let changed = Self.load(text, files: ["dir/aasa.json": second], reusing: before)
        #expect(String(decoding: changed.sites[0].bytes, as: UTF8.self) == second)
        let gone = Self.load(text, files: [:], reusing: before)
        #expect(gone.diagnostics.contains { $0.rule == "file.unreadable" })
    }

    @Test("The structural scan finds each site's exact bytes, or declines")
    func siteSpans() throws {
        let text = #"{"apps": {"sites": ["x"]}, "sites": [ {"hosts": ["a\"]}{"]} , {"b": [[], {}]} ], "server": {}}"#
        let bytes = Array(text.utf8)
        let spans = try #require(SiteReuse.siteSpans(bytes))
        #expect(spans.map { String(decoding: bytes[$0], as: UTF8.self) } == [#"{"hosts": ["a\"]}{"]}"#, #"{"b": [[], {}]}"#])
        #expect(SiteReuse.siteSpans(Array(#"{"sites": []}"#.utf8)) == [])
        for declined in [
            #"{"sites": [{"a": 1}, // comment"#, #"{"sites": ["a.example.com"]}"#, #"{"sites": [{"a": 1}"#,
            #"{"sites": [1]}"#,
        ] {
            #expect(SiteReuse.siteSpans(Array(declined.utf8)) == nil, "\(declined)")
        }
    }

    @Test("Sites built in parallel, each parsed on its own: the same result as one sequential load")
    func parallelLoad() throws {
        let sites = (0..<120).map { Self.site($0, multiline: $0 % 3 == 0) }
        let text = Self.config(sites)
        let sequential = Self.load(text)
        let parallel = Self.load(text, parallel: Self.threads)
        #expect(!sequential.hasErrors)
        #expect(Self.summary(parallel) == Self.summary(sequential))
        // An edit of 70 sites (enough to build them in parallel) on top of the parallel load.
        let edited = Self.config((0..<120).map { Self.site($0, product: $0 < 70 ? "item" : "product", multiline: $0 % 3 == 0) })
        #expect(Self.summary(Self.load(edited, reusing: parallel, parallel: Self.threads)) == Self.summary(Self.load(edited)))
    }

    @Test("CRLF line ends, tabs and non-ASCII text before and between sites: positions stay exact in parallel")
    func parallelPositions() throws {
        let sites = (0..<80).map { number in
            Self.site(number, multiline: number % 3 == 0).replacingAll("{\"hosts\"", with: "{\"comment\": \"café ☕ \(number)\",\t\"hosts\"")
        }
        // Several sites share a line, after non-ASCII text on it: their columns count characters, not bytes.
        let text =
            ("{\"comment\": \"naïve — ünïcode\", \"version\": 1, \"apps\": {\"shop\": \"ABCDE12345.com.example.shop\"}, \"sites\": ["
            + sites.joined(separator: ", ") + "]}\n").replacingAll("\n", with: "\r\n")
        let sequential = Self.load(text)
        #expect(!sequential.hasErrors)
        #expect(sequential.diagnostics.count >= 80)
        #expect(Self.load(text, parallel: Self.threads).diagnostics.map(\.description) == sequential.diagnostics.map(\.description))
        let previous = Self.load(text, parallel: Self.threads)
        let edited = text.replacingAll("/product/41/*", with: "/item/41/*").replacingAll("café ☕ 3\"", with: "café ☕☕ 3\"")
        #expect(Self.summary(Self.load(edited, reusing: previous, parallel: Self.threads)) == Self.summary(Self.load(edited)))
    }

    @Test(
        "A syntax error inside one of many sites is reported exactly as a sequential parse reports it",
        arguments: [
            (#""apps": ["shop"],"#, #""apps": ["shop"],,"#),  // a doubled comma
            (#"{"/": "/cart""#, #"{"/": "/cart", "/": "/cart""#),  // a duplicate key
            (#""?": {"id": "?*"}}"#, #""?": {"id": "?*",}}"#),  // a trailing comma
        ]
    )
    func parallelSyntaxError(original: String, broken: String) throws {
        var sites = (0..<100).map { Self.site($0) }
        sites[57] = sites[57].replacingAll(original, with: broken)
        let text = Self.config(sites)
        let sequential = Self.load(text)
        let parallel = Self.load(text, parallel: Self.threads)
        #expect(sequential.hasErrors)
        #expect(parallel.diagnostics.map(\.description) == sequential.diagnostics.map(\.description))
        // A second error after the sites: the first one in the file is still the one reported.
        let twoErrors = text.replacingAll("\n]}", with: "\n],, }")
        #expect(
            Self.load(twoErrors, parallel: Self.threads).diagnostics.map(\.description)
                == Self.load(twoErrors).diagnostics.map(\.description)
        )
        let previous = Self.load(Self.config((0..<100).map { Self.site($0) }), parallel: Self.threads)
        #expect(
            Self.load(text, reusing: previous, parallel: Self.threads).diagnostics.map(\.description)
                == sequential.diagnostics.map(\.description)
        )
    }

    @Test("Skipped values leave a null at their start, and positions after them stay exact")
    func parserSkipping() throws {
        let text = "[{\"a\":\n\"é\"}, 1,\n  true]"
        let bytes = Array(text.utf8)
        let objectEnd = try #require(bytes.firstIndex(of: UInt8(ascii: "}"))) + 1
        let skipped = JSONParser.parse(bytes, duplicateKeys: .error, skipping: [1..<objectEnd])
        let full = JSONParser.parse(bytes)
        let items = try #require(skipped.root?.arrayValue)
        let fullItems = try #require(full.root?.arrayValue)
        guard case .null = items[0].value else {
            Issue.record("the skipped value should be a null placeholder")
            return
        }
        #expect(items[0].location == fullItems[0].location)
        #expect(items[1].location == fullItems[1].location)
        #expect(items[2].location == fullItems[2].location)
        #expect(items[2].location.line == 3)
    }
}
