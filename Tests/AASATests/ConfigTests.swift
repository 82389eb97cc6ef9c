import TestSupport
import Testing

@testable import AASA

@Suite("Config, hosts and generation")
struct ConfigTests {
    /// Loads `json` as config.json with `files` as the other files on "disk".
    static func load(_ json: String, files: [String: String] = [:]) -> LoadedConfig {
        ConfigLoader.load(configBytes: Array(json.utf8), configPath: "dir/config.json") { path in
            if let text = files[path] { return .success(Array(text.utf8)) }
            return .failure(FileReadError("no such file"))
        }
    }

    static func site(_ body: String, extra: String = "") -> String {
        #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [{"hosts": ["example.com"], \#(body)}]\#(extra)}"#
    }

    static func rules(_ loaded: LoadedConfig) -> [String] { loaded.diagnostics.map(\.rule) }

    // MARK: Hosts

    @Test("Host lookup: exact beats wildcard, longest wildcard wins, the apex is not covered, case/port/dot ignored")
    func hostTable() {
        var table = HostTable<String>()
        table.insert(.exact("example.com"), "apex")
        table.insert(.exact("www.example.com"), "www")
        table.insert(.wildcard("example.com"), "any")
        table.insert(.wildcard("users.example.com"), "users")
        #expect(table.lookup("example.com") == "apex")
        #expect(table.lookup("WWW.Example.COM.:8443") == "www")
        #expect(table.lookup("shop.example.com") == "any")
        #expect(table.lookup("a.b.example.com") == "any")
        #expect(table.lookup("emily.users.example.com") == "users")
        #expect(table.lookup("users.example.com") == "any")
        #expect(table.lookup("badexample.com") == nil)
        #expect(table.lookup("example.org") == nil)
        #expect(HostTable<Int>.normalize("[::1]:8080") == "[::1]")
        // The wildcard serving a name: the one lookup chose, none for an exact host.
        #expect(table.wildcard(serving: "emily.users.example.com") == "*.users.example.com")
        #expect(table.wildcard(serving: "a.b.example.com") == "*.example.com")
        #expect(table.wildcard(serving: "www.example.com") == nil)
        #expect(table.wildcard(serving: "example.com") == nil)
        #expect(table.wildcard(serving: "example.org") == nil)
    }

    @Test("With many wildcards the lookup by parent domain gives what trying each wildcard gives")
    func manyWildcards() {
        let suffixes = (0..<40).map { "t\($0).example.com" } + ["example.com", "deep.t3.example.com", "org"]
        var many = HostTable<String>()
        for suffix in suffixes { many.insert(.wildcard(suffix), suffix) }
        many.insert(.exact("t1.example.com"), "exact")
        for name in [
            "a.t1.example.com", "x.deep.t3.example.com", "deep.t3.example.com", "t3.example.com", "a.b.t39.example.com",
            "example.com", "t1.example.com", "a.org", "org", "a..t2.example.com", "other.net", ".example.com", "a.example.com",
        ] {
            // The reference: every wildcard in order of length, as a table with few wildcards does it.
            let reference =
                name == "t1.example.com"
                ? "exact"
                : suffixes.filter { name.hasSuffix("." + $0) && name.count > $0.count + 1 }.max { $0.count < $1.count }
            #expect(many.lookup(name) == reference, "\(name)")
        }
    }

    @Test(
        "Invalid hosts are rejected with the reason",
        arguments: [
            ("https://example.com", "scheme"), ("example.com/path", "path"), ("example.com:8080", "port"),
            ("a.*.example.com", "first label"), ("*.com", "top-level"), ("exa mple.com", "not allowed"),
            ("bücher.de", "punycode"), ("-a.example.com", "starts or ends"), ("a..b", "empty label"),
        ]
    )
    func invalidHosts(host: String, reason: String) throws {
        guard case .failure(let error) = HostPattern.parse(host) else {
            Issue.record("\(host) should be rejected")
            return
        }
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test("Duplicate hosts across sites are an error naming the first site")
    func duplicateHosts() throws {
        let loaded = Self.load(
            #"""
            {"version": 1, "sites": [
              {"hosts": ["example.com"], "webcredentials": {"apps": ["ABCDE12345.a.b"]}},
              {"hosts": ["EXAMPLE.com."], "webcredentials": {"apps": ["ABCDE12345.a.c"]}}]}
            """#
        )
        let duplicate = try #require(loaded.diagnostics.first { $0.rule == "host.duplicate" })
        #expect(duplicate.location?.line == 3)
        #expect(duplicate.message.contains("$.sites[0].hosts[0]"))
        #expect(loaded.site(forHost: "example.com")?.document?.webcredentials?.apps.first?.value == "ABCDE12345.a.b")
    }

    // MARK: Decoding

    @Test("Unknown keys anywhere are errors with the closest key suggested")
    func unknownKeys() throws {
        let loaded = Self.load(Self.site(#""applinks": {"detials": []}"#, extra: #", "unknownHosts": "empty""#))
        let messages = loaded.diagnostics.filter { $0.rule == "key.unknown" }.map(\.message)
        #expect(messages.contains { $0.contains("did you mean \"details\"?") })
        #expect(messages.contains { $0.contains("did you mean \"unknownHost\"?") })
        #expect(loaded.hasErrors)
    }

    @Test("AASA-style keys in a config details entry get an explanation of the config form")
    func aasaKeysInConfig() throws {
        let loaded = Self.load(Self.site(#""applinks": {"details": [{"appIDs": ["shop"], "paths": ["/a"], "components": []}]}"#))
        let messages = loaded.diagnostics.map(\.message)
        #expect(messages.contains { $0.contains("lists its apps under \"apps\"") })
        #expect(messages.contains { $0.contains("legacy \"paths\" are generated") })
    }

    @Test("App names resolve; an unknown name suggests the nearest, a dotted string is a literal ID")
    func appResolution() throws {
        let loaded = Self.load(Self.site(#""webcredentials": {"apps": ["shpo", "ABCDE12345.com.other"]}"#))
        let unknown = try #require(loaded.diagnostics.first { $0.rule == "app.unknown" })
        #expect(unknown.message.contains("did you mean \"shop\"?"))
        #expect(unknown.path == "$.sites[0].webcredentials.apps[0]")
        let ok = Self.load(Self.site(#""webcredentials": {"apps": ["shop", "ABCDE12345.com.other"]}"#))
        #expect(!ok.hasErrors)
        #expect(ok.sites[0].document?.webcredentials?.apps.map(\.value) == ["ABCDE12345.com.example.shop", "ABCDE12345.com.other"])
    }

    @Test("A bad app ID in the apps table points at the config line")
    func badAliasID() throws {
        let loaded = Self.load(#"{"version": 1, "apps": {"shop": "com.example.shop"}, "sites": []}"#)
        let finding = try #require(loaded.diagnostics.first { $0.rule == "appid.format" })
        #expect(finding.file == "dir/config.json")
        #expect(finding.path == "$.apps.shop")
    }

    @Test("Config-level rules: version, unknownHost, sites, site source, formats, server section")
    func configRules() {
        #expect(Self.rules(Self.load(#"{"version": 2, "sites": []}"#)).contains("config.version"))
        #expect(Self.load(#"{"sites": []}"#).diagnostics.first { $0.rule == "config.version" }?.severity == .warning)
        let policy = Self.load(#"{"version": 1, "sites": [], "unknownHost": "emtpy"}"#)
        #expect(policy.diagnostics.first { $0.rule == "config.unknown-host" }?.message.contains("did you mean \"empty\"") == true)
        #expect(Self.load(#"{"version": 1, "sites": [], "unknownHost": "404"}"#).config?.unknownHost == .notFound)
        #expect(Self.rules(Self.load(#"{"version": 1}"#)).contains("config.sites-missing"))
        #expect(Self.rules(Self.load(#"{"version": 1, "sites": [{"hosts": ["example.com"]}]}"#)).contains("site.source"))
        #expect(Self.rules(Self.load(Self.site(#""file": "a.json", "webcredentials": {"apps": ["shop"]}"#))).contains("site.source"))
        #expect(Self.rules(Self.load(Self.site(#""applinks": {"formats": ["modrn"], "details": []}"#))).contains("applinks.format"))
        #expect(Self.rules(Self.load(#"{"version": 1, "sites": [], "server": {"listn": []}}"#)).contains("key.unknown"))
        #expect(Self.rules(Self.load(#"{"version": 1, "sites": [{"webcredentials": {"apps": []}}]}"#)).contains("site.hosts-missing"))
    }

    @Test("A config that is not JSON reports the syntax error in the config file")
    func syntaxError() throws {
        let loaded = Self.load("{\"version\": 1,\n \"sites\": [],\n}")
        let error = try #require(loaded.diagnostics.first)
        #expect(error.rule == "json.trailing-comma")
        #expect(error.file == "dir/config.json")
        #expect(error.location?.line == 2)
        #expect(loaded.config == nil)
    }

    // MARK: Generation

    @Test("Modern generation is canonical: fixed key order, compact, deterministic")
    func modernGeneration() throws {
        let config = Self.site(
            #"""
            "applinks": {"defaults": {"caseSensitive": false}, "substitutionVariables": {"food": ["taco"]},
              "details": [{"apps": ["shop"], "components": [
                {"comment": "c", "exclude": true, "/": "/admin/*"}, {"/": "/$(food)/*"}]}]},
            "webcredentials": {"apps": ["shop"]}
            """#
        )
        let first = Self.load(config)
        #expect(!first.hasErrors, "\(first.diagnostics)")
        let bytes = try #require(first.site(forHost: "example.com")?.bytes)
        let expected =
            #"{"applinks":{"defaults":{"caseSensitive":false},"substitutionVariables":{"food":["taco"]},"#
            + #""details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/admin/*","exclude":true,"comment":"c"},"#
            + #"{"/":"/$(food)/*"}]}]},"webcredentials":{"apps":["ABCDE12345.com.example.shop"]}}"#
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(Self.load(config).sites[0].bytes == bytes)
        #expect(!bytes.starts(with: [0xEF, 0xBB, 0xBF]))
        let pretty = String(decoding: first.sites[0].prettyBytes(), as: UTF8.self)
        #expect(pretty.contains("\n  \"applinks\": {"))
    }

    @Test("Both formats: one {appIDs, components} entry, then one {appID, paths} entry per app, never mixed")
    func bothFormats() throws {
        let loaded = Self.load(
            #"""
            {"version": 1, "apps": {"a": "ABCDE12345.com.a", "b": "ABCDE12345.com.b"},
             "sites": [{"hosts": ["example.com"], "applinks": {"formats": ["modern", "legacy"],
               "details": [{"apps": ["a", "b"], "components": [{"/": "/admin/*", "exclude": true}, {"/": "/p/*"}, {}]}]}}]}
            """#
        )
        #expect(!loaded.hasErrors, "\(loaded.diagnostics)")
        let details = try #require(loaded.sites[0].document?.applinks?.details)
        #expect(details.count == 3)
        #expect(details[0].appIDs?.map(\.value) == ["ABCDE12345.com.a", "ABCDE12345.com.b"])
        #expect(details[0].paths == nil)
        #expect(details[1].appID?.value == "ABCDE12345.com.a")
        #expect(details[1].components == nil)
        #expect(details[1].paths?.map(\.value) == ["NOT /admin/*", "/p/*", "*"])
        #expect(details[2].appID?.value == "ABCDE12345.com.b")
        #expect(loaded.sites[0].document?.applinks?.apps?.isEmpty == true)
        // The generated document passes its own validation and both formats agree on every sample URL.
        let matcher = Matcher(try #require(loaded.sites[0].document))
        #expect(matcher.match("https://example.com/admin/x").app == nil)
        #expect(matcher.match("https://example.com/p/1").app == "ABCDE12345.com.a")
        let legacyOnly = Matcher(AASADocument(applinks: AppLinks(details: [details[1]])))
        #expect(legacyOnly.match("https://example.com/admin/x").app == nil)
        #expect(legacyOnly.match("https://example.com/p/1").app == "ABCDE12345.com.a")
    }

    @Test("Legacy-only output has no components and expands small substitution variables")
    func legacyExpansion() throws {
        let loaded = Self.load(
            Self.site(
                #""applinks": {"formats": ["legacy"], "substitutionVariables": {"food": ["taco", "pizza"]}, "details": [{"apps": ["shop"], "components": [{"/": "/$(food)/$(digit)"}]}]}"#
            )
        )
        let details = try #require(loaded.sites[0].document?.applinks?.details)
        #expect(details.count == 1)
        #expect(details[0].components == nil)
        #expect(details[0].paths?.count == 20)
        #expect(details[0].paths?.first?.value == "/taco/0")
        #expect(loaded.sites[0].document?.applinks?.substitutionVariables.isEmpty == true)
    }

    @Test("What legacy cannot express is warned about, naming the component")
    func legacyWarnings() throws {
        let loaded = Self.load(
            Self.site(
                ##""applinks": {"formats": ["modern", "legacy"], "details": [{"apps": ["shop"], "components": [{"/": "/q", "?": {"id": "?*"}}, {"#": "x", "exclude": true}, {"/": "/CI/*", "caseSensitive": false}, {"/": "/é/*", "percentEncoded": false}, {"/": "/$(lang)_$(region)/*"}]}]}"##
            )
        )
        let warnings = loaded.diagnostics.filter { $0.severity == .warning }
        let rules = warnings.map(\.rule)
        #expect(rules.filter { $0 == "legacy.unsupported-condition" }.count == 2)
        #expect(rules.contains("legacy.case-insensitive"))
        #expect(rules.contains("legacy.percent-encoded"))
        #expect(rules.contains("legacy.expansion-too-large"))
        #expect(warnings.first { $0.rule == "legacy.unsupported-condition" }?.message.contains(#"{"/":"/q","?":{"id":"?*"}}"#) == true)
        #expect(warnings.first { $0.rule == "legacy.unsupported-condition" }?.path == "$.sites[0].applinks.details[0].components[0]")
        let legacy = try #require(loaded.sites[0].document?.applinks?.details.last?.paths?.map(\.value))
        #expect(legacy == ["/CI/*", "/%C3%A9/*"])
    }

    @Test("An inherited caseSensitive: false is warned about once for the group, not per component")
    func legacyInheritedCase() {
        let loaded = Self.load(
            Self.site(
                #""applinks": {"formats": ["modern", "legacy"], "defaults": {"caseSensitive": false}, "details": [{"apps": ["shop"], "components": [{"/": "/a"}, {"/": "/b"}, {"/": "/c"}]}]}"#
            )
        )
        let warnings = loaded.diagnostics.filter { $0.rule == "legacy.case-insensitive" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.path == "$.sites[0].applinks")
    }

    @Test("Semantic findings on a generated document point into the config")
    func generatedFindingsPointAtConfig() throws {
        let loaded = Self.load(
            """
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [{"hosts": ["example.com"],
              "applinks": {"details": [{"apps": ["shop"], "components": [
                {"/": "*"},
                {"/": "/$(fod)/*"}]}]}}]}
            """
        )
        let unreachable = try #require(loaded.diagnostics.first { $0.rule == "rule.unreachable" })
        #expect(unreachable.file == "dir/config.json")
        #expect(unreachable.location?.line == 4)
        #expect(unreachable.path == "$.sites[0].applinks.details[0].components[1]")
        #expect(loaded.diagnostics.contains { $0.rule == "variable.undefined" && $0.location?.line == 4 })
    }

    @Test("appclips on a wildcard host is an error, for generated and hosted documents")
    func appclipsWildcard() {
        let generated = Self.load(
            #"{"version": 1, "sites": [{"hosts": ["*.example.com"], "appclips": {"apps": ["ABCDE12345.a.Clip"]}}]}"#
        )
        #expect(Self.rules(generated).contains("appclips.wildcard-host"))
        let hosted = Self.load(
            #"{"version": 1, "sites": [{"hosts": ["*.example.com"], "file": "clip.json"}]}"#,
            files: ["dir/clip.json": #"{"applinks": {"details": []}, "appclips": {"apps": ["ABCDE12345.a.Clip"]}}"#]
        )
        #expect(Self.rules(hosted).contains("appclips.wildcard-host"))
    }

    @Test("An oversized generated document is an error listing its biggest parts")
    func generatedSize() throws {
        let components = (0..<4000).map { #"{"/": "/catalogue/section-\#($0)/item/*"}"# }.joined(separator: ",")
        let loaded = Self.load(Self.site(#""applinks": {"details": [{"apps": ["shop"], "components": [\#(components)]}]}"#))
        let finding = try #require(loaded.diagnostics.first { $0.rule == "size.limit" })
        #expect(finding.message.contains("details entry for ABCDE12345.com.example.shop"))
        #expect(finding.path == "$.sites[0]")
    }

    // MARK: Verbatim files

    @Test("A verbatim file is served byte for byte and validated like a generated one, findings in that file")
    func verbatimFile() throws {
        let text = "{\"applinks\": {\"details\": [{\"appIDs\": [\"bad\"], \"components\": [{\"/\": \"/a\"}]}]}}\n"
        let loaded = Self.load(
            #"{"version": 1, "sites": [{"hosts": ["*.tenant.example.com"], "file": "aasa/tenant.json"}]}"#,
            files: ["dir/aasa/tenant.json": text]
        )
        let site = try #require(loaded.site(forHost: "a.tenant.example.com"))
        #expect(site.bytes == Array(text.utf8))
        #expect(site.file == "dir/aasa/tenant.json")
        let finding = try #require(loaded.diagnostics.first { $0.rule == "appid.format" })
        #expect(finding.file == "dir/aasa/tenant.json")
        #expect(finding.location?.line == 1)
    }

    @Test("A missing or broken verbatim file is an error; every site's findings are reported together")
    func brokenFiles() throws {
        let loaded = Self.load(
            #"""
            {"version": 1, "sites": [
              {"hosts": ["a.example.com"], "file": "missing.json"},
              {"hosts": ["b.example.com"], "file": "/abs/broken.json"},
              {"hosts": ["c.example.com"], "webcredentials": {"apps": ["nope"]}}]}
            """#,
            files: ["/abs/broken.json": "{\"applinks\": {\"details\": [],}}"]
        )
        let unreadable = try #require(loaded.diagnostics.first { $0.rule == "file.unreadable" })
        #expect(unreadable.message.contains("dir/missing.json"))
        #expect(unreadable.location?.line == 2)
        #expect(loaded.diagnostics.contains { $0.rule == "json.trailing-comma" && $0.file == "/abs/broken.json" })
        #expect(loaded.diagnostics.contains { $0.rule == "app.unknown" })
    }

    @Test("The bundled example configs load without findings")
    func bundledExamples() throws {
        for name in [
            "example.json", "examples/multi-domain.json", "examples/multi-environment.json", "examples/verbatim-files.json",
            "examples/https.json", "examples/acme.json",
        ] {
            let path = Fixtures.repositoryRoot + "/config/" + name
            let loaded = ConfigLoader.load(configBytes: try Fixtures.read(path), configPath: path) { file in
                (try? Fixtures.read(file)).map { .success($0) } ?? .failure(FileReadError("missing"))
            }
            #expect(loaded.diagnostics.isEmpty, "\(name): \(loaded.diagnostics)")
            #expect(!loaded.sites.isEmpty)
        }
    }
}

@Suite("App names resolved to app IDs")
struct ResolveAppsTests {
    /// What the decoder promises: each name replaced by its ID, a literal ID kept, and an ID reached by a
    /// second name dropped (listed once, under the first name that reached it).
    static func expected(_ names: [String], _ table: [String: String]) -> [String] {
        var firstName: [String: String] = [:]
        var result: [String] = []
        for name in names {
            if let id = table[name] {
                if let first = firstName[id], first != name { continue }
                firstName[id] = name
                result.append(id)
            } else if name.contains(".") {
                result.append(name)
            }
        }
        return result
    }

    @Test("Short lists (looked back over) and long ones (a table) give the same IDs in the same order: 2,000 random lists")
    func shortAndLongAgree() throws {
        let table = ["a": "T.one", "b": "T.one", "c": "T.two", "d": "T.three", "e": "T.two"]
        let pool = ["a", "b", "c", "d", "e", "T.literal", "T.one"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let names = (0..<Int.random(in: 0...40, using: &generator)).map { _ in pool.randomElement(using: &generator)! }
            let node = try #require(JSONParser.parse(Array(JSONWriter.string(.array(names.map { .string($0) })).utf8)).root)
            var reader = NodeReader()
            let resolved = ConfigDecoder.resolveApps(node, owner: .root, aliases: AppTable(apple: table), &reader)
            #expect(resolved.map(\.value) == Self.expected(names, table), "\(names)")
            #expect(reader.findings.isEmpty)
        }
    }
}
