import Dispatch
import Support
import Testing

@testable import AASA

/// An included file's common sites are decoded without a JSON tree (``DirectSiteDecoder``): every file is
/// loaded both ways and must give the same sites — values, positions and JSON paths — the same documents
/// and the same findings, whatever the spacing and whether or not the direct reader takes a site.
@Suite("Sites decoded without a tree")
struct DirectSiteDecoderTests {
    static let aliases = AppTable(apple: [
        "shop": "ABCDE12345.com.example.shop", "beta": "ABCDE12345.com.example.beta", "same": "ABCDE12345.com.example.shop",
    ])

    /// The whole value, every stored position and path spelt out (`Located` and `Provenance` compare
    /// without them).
    static func spelled(_ value: Any) -> String {
        if let path = value as? JSONPath { return path.description }
        if let location = value as? AASA.SourceLocation { return "\(location.offset)@\(location.line):\(location.column)" }
        if let hosts = value as? SiteHosts { return "hosts[" + hosts.map { spelled($0) }.joined(separator: ", ") + "]" }
        let mirror = Mirror(reflecting: value)
        if mirror.children.isEmpty { return String(describing: value) }
        let children = mirror.children.map { "\($0.label ?? "_")=\(spelled($0.value))" }
        return "\(type(of: value))(" + children.joined(separator: ", ") + ")"
    }

    static func load(_ text: String, direct: Bool, servingOnly: Bool) -> IncludeState.File {
        IncludedSites.loadFile(
            "/etc/aasa/sites.d/t.json",
            stamp: "1",
            aliases: aliases,
            readFile: { _ in .success(Array(text.utf8)) },
            servingOnly: servingOnly,
            decodesDirectly: direct
        )
    }

    /// Loaded as `validate` loads it and as a server does, which first builds each site without the
    /// positions inside it and decodes it again with them when building it gave a finding.
    static func expectSame(_ text: String, _ comment: Comment? = nil) {
        for servingOnly in [false, true] {
            let direct = load(text, direct: true, servingOnly: servingOnly)
            let tree = load(text, direct: false, servingOnly: servingOnly)
            #expect(direct.findings.map(spelled) == tree.findings.map(spelled), comment)
            #expect(direct.group.sites.count == tree.group.sites.count, comment)
            for (left, right) in zip(direct.group.sites, tree.group.sites) {
                #expect(spelled(left.site) == spelled(right.site), comment)
                #expect(left.served.array == right.served.array, comment)
            }
        }
    }

    /// A file's text with random spacing: none, spaces, or newlines and indentation, per token.
    struct Writer {
        var random: SystemRandomNumberGenerator
        var text = ""
        var spacing: Int

        mutating func space() {
            switch spacing {
            case 0: break
            case 1: if Bool.random(using: &random) { text += " " }
            default:
                switch Int.random(in: 0..<4, using: &random) {
                case 0: text += "\n" + String(repeating: " ", count: Int.random(in: 0..<6, using: &random))
                case 1: text += "\r\n\t"
                case 2: text += " "
                default: break
                }
            }
        }

        mutating func write(_ value: Value) {
            space()
            switch value {
            case .raw(let raw): text += raw
            case .string(let string): text += "\"" + string + "\""
            case .array(let items): separated(items, "[", "]") { $0.write($1) }
            case .object(let members):
                separated(members, "{", "}") { writer, member in
                    writer.space()
                    writer.text += "\"" + member.0 + "\""
                    writer.space()
                    writer.text += ":"
                    writer.write(member.1)
                }
            }
        }

        mutating func separated<Item>(_ items: [Item], _ open: String, _ close: String, _ each: (inout Writer, Item) -> Void) {
            text += open
            for (position, item) in items.enumerated() {
                if position > 0 {
                    space()
                    text += ","
                }
                each(&self, item)
            }
            space()
            text += close
        }
    }

    indirect enum Value {
        case raw(String)
        case string(String)
        case array([Value])
        case object([(String, Value)])
    }

    /// A site of the common shape, sometimes with one thing the direct reader must leave to the tree.
    /// `duplicateKeys: false` leaves out the duplicate keys: in a config's own sites one sends the whole
    /// load to a parse of the whole file.
    static func site(_ number: Int, duplicateKeys: Bool = true, using random: inout SystemRandomNumberGenerator) -> Value {
        let unusual = Int.random(in: 0..<40, using: &random)
        func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        var components: [Value] = []
        for _ in 0..<Int.random(in: 0..<4, using: &random) {
            var members: [(String, Value)] = [("/", .string(pick(["/admin/*", "/product/\(number)/*", "/", "/é/x", "/a b"])))]
            if Bool.random(using: &random) { members.append(("exclude", .raw(pick(["true", "false"])))) }
            if Bool.random(using: &random) {
                members.append(
                    (
                        "?",
                        pick([
                            .string("id=*"), .object([("id", .string("?*"))]), .object([("a", .string("1")), ("b", .string("*"))]),
                            .object([]),
                        ])
                    )
                )
            }
            if Int.random(in: 0..<4, using: &random) == 0 { members.append(("#", .string("top"))) }
            if Int.random(in: 0..<5, using: &random) == 0 { members.append(("caseSensitive", .raw("false"))) }
            if Int.random(in: 0..<5, using: &random) == 0 { members.append(("percentEncoded", .raw("true"))) }
            if Int.random(in: 0..<6, using: &random) == 0 { members.append(("comment", .string("note"))) }
            members.shuffle(using: &random)
            components.append(.object(members))
        }
        let appLists: [[Value]] = [
            [.string("shop")], [.string("shop"), .string("beta")], [.string("shop"), .string("same")], [.string("same"), .string("shop")],
            [.string("shop"), .string("shop")], [.string("TEAM123456.com.example.literal")], [],
        ]
        var details: [(String, Value)] = [("apps", .array(pick(appLists))), ("components", .array(components))]
        if Int.random(in: 0..<8, using: &random) == 0 { details.append(("comment", .string("c"))) }
        details.shuffle(using: &random)
        let hosts: [Value] = pick([
            [.string("shop\(number).example.com"), .string("www.shop\(number).example.com")], [.string("*.t\(number).example.com")],
            [.string("s\(number).example.org")],
        ])
        var members: [(String, Value)] = [("hosts", .array(hosts))]
        let services = ["applinks", "webcredentials", "appclips", "activitycontinuation"].filter { _ in Bool.random(using: &random) }
        for service in services.isEmpty ? ["applinks"] : services {
            if service == "applinks" {
                var applinks: [(String, Value)] = [
                    ("details", .array(Int.random(in: 0..<6, using: &random) == 0 ? [] : [.object(details)]))
                ]
                if Int.random(in: 0..<8, using: &random) == 0 { applinks.append(("comment", .string("a"))) }
                members.append((service, .object(applinks)))
            } else {
                members.append((service, .object([("apps", .array(pick(appLists)))])))
            }
        }
        if Int.random(in: 0..<8, using: &random) == 0 { members.append(("comment", .string("tenant \(number)"))) }
        members.shuffle(using: &random)
        func add(_ member: (String, Value)) {
            if duplicateKeys || !members.contains(where: { $0.0 == member.0 }) { members.append(member) }
        }
        let hostsAt = members.firstIndex { $0.0 == "hosts" }!
        switch unusual {
        case 0: add(("hosts", .array([.string("again.example.com")])))
        case 1: add(("links", .object([("app", .string("shop")), ("rules", .array([]))])))
        case 2: add(("colour", .string("blue")))
        case 3: members[hostsAt] = ("hosts", .array([.string("Upper\(number).Example.com")]))
        case 4: members[hostsAt] = ("hosts", .array([]))
        case 5: add(("webcredentials", .object([("apps", .array([.string("nosuchapp")]))])))
        case 6: add(("comment", .raw("42")))
        case 7: add(("appclips", .object([("apps", .array([.string("sh\\u006fp")]))])))
        case 8: add(("android", .array([.string("shop")])))
        case 9: members = [("hosts", .array(hosts)), ("comment", .string("nothing"))]
        case 10: add(("appclips", .object([("apps", .raw("null"))])))
        case 11: members = [("hosts", .array(hosts)), ("file", .string("aasa.json"))]
        case 12 where duplicateKeys: add(("activitycontinuation", .object([("apps", .array([.string("shop")])), ("apps", .array([]))])))
        default: break
        }
        return .object(members)
    }

    @Test("random files load to the same sites, documents and findings either way")
    func randomFiles() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<400 {
            var writer = Writer(random: random, spacing: round % 3)
            var sites: [Value] = []
            for number in 0..<Int.random(in: 1..<8, using: &random) {
                sites.append(Self.site(number, using: &random))
            }
            // A non-ASCII byte earlier on the line: columns count scalars from the line's start.
            if round % 5 == 0 {
                sites.insert(.object([("hosts", .array([.string("ü.example.com")])), ("comment", .string("ü"))]), at: 0)
            }
            writer.write(.array(sites))
            Self.expectSame(writer.text, "round \(round): \(writer.text)")
        }
    }

    /// Broken and odd JSON as well: each file has a few bytes replaced, removed or doubled, so the direct
    /// reader meets every kind of syntax error and near-miss the tree's way reports.
    @Test("mutated files load the same either way")
    func mutatedFiles() {
        var random = SystemRandomNumberGenerator()
        let significant = Array(#"{}[]:," \tn1-.é/*?#"#.utf8) + [0x0A, 0x0D, 0x5C, 0x00]
        for round in 0..<1500 {
            var writer = Writer(random: random, spacing: round % 3)
            writer.write(.array((0..<Int.random(in: 1..<4, using: &random)).map { Self.site($0, using: &random) }))
            var bytes = Array(writer.text.utf8)
            for _ in 0..<Int.random(in: 1..<4, using: &random) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = significant[Int.random(in: 0..<significant.count, using: &random)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            Self.expectSame(text, "round \(round): \(text)")
        }
    }

    /// The config's own sites, each parsed on its own thread when there are enough of them: the direct
    /// reader takes a site only when it ends where the scan of the file said it does.
    @Test("a config's own sites load the same either way, parsed in parallel or whole")
    func configSites() {
        var random = SystemRandomNumberGenerator()
        let threads: ParallelFor = { count, body in DispatchQueue.concurrentPerform(iterations: count) { body($0) } }
        for round in 0..<24 {
            var writer = Writer(random: random, spacing: round % 3)
            var sites = (0..<Int.random(in: 60..<90, using: &random)).map { Self.site($0, duplicateKeys: round % 3 != 0, using: &random) }
            if round % 4 == 0 { sites.insert(.object([("hosts", .array([.string("ü.example.com")])), ("comment", .string("ü"))]), at: 0) }
            writer.write(.array(sites))
            var text =
                #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop", "beta": "ABCDE12345.com.example.beta", "same": "ABCDE12345.com.example.shop"}, "sites": "#
            text += writer.text + "}"
            if round % 6 == 5 { text = text.replacingAll("\"exclude\":true", with: "\"exclude\":true,") }
            func load(direct: Bool, parallel: ParallelFor?) -> LoadedConfig {
                ConfigLoader.load(
                    configBytes: Array(text.utf8),
                    configPath: "/etc/aasa/config.json",
                    readFile: { _ in .failure(FileReadError("no such file")) },
                    reusing: nil,
                    parallel: parallel,
                    servingOnly: round % 2 == 0,
                    includes: nil,
                    compiled: nil,
                    decodesDirectly: direct
                )
            }
            let tree = load(direct: false, parallel: nil)
            for loaded in [load(direct: true, parallel: threads), load(direct: true, parallel: nil)] {
                #expect(loaded.diagnostics.map(Self.spelled) == tree.diagnostics.map(Self.spelled), "round \(round)")
                #expect(loaded.sites.map { Self.spelled($0.site) } == tree.sites.map { Self.spelled($0.site) }, "round \(round)")
                #expect(loaded.sites.map(\.served.array) == tree.sites.map(\.served.array), "round \(round)")
            }
        }
    }

    @Test("App names looked up from the text's bytes give what the table gives, compared one by one or through the table")
    func appNamesFromBytes() {
        let few = Self.aliases
        var many = AppTable()
        for number in 0..<(AppNames.comparedOneByOne + 4) { many.apple["app\(number)"] = "ABCDE12345.com.example.app\(number)" }
        many.apple["shop"] = "ABCDE12345.com.example.shop"
        for table in [few, many, AppTable()] {
            let names = AppNames(table)
            let probes = Array(table.apple.keys) + ["", "sho", "shopx", "Shop", "app", "app1x", "same ", "beta"]
            for probe in probes {
                let found = Array(probe.utf8).withUnsafeBufferPointer { names.id(named: $0) }
                #expect(found?.id == table.apple[probe], "\(probe) among \(table.apple.count) names")
                // Compared one by one, a name also gives the one list of its app alone, the same each time.
                if let found, let alone = found.alone {
                    #expect(table.apple.count <= AppNames.comparedOneByOne)
                    #expect(alone.map(\.value) == [found.id] && alone[0].origin.location == nil)
                    let again = Array(probe.utf8).withUnsafeBufferPointer { names.id(named: $0) }?.alone
                    #expect(again?.withUnsafeBufferPointer { $0.baseAddress } == alone.withUnsafeBufferPointer { $0.baseAddress })
                } else if found != nil {
                    #expect(table.apple.count > AppNames.comparedOneByOne)
                }
            }
        }
    }

    @Test("the bench's sites are taken without a tree, and with it where the direct reader declines")
    func declinesAndTakes() {
        let common =
            #"{"hosts":["shop0.example.com","www.shop0.example.com"],"applinks":{"details":[{"apps":["shop"],"components":[{"/":"/admin/*","exclude":true},{"/":"/product/0/*"},{"/":"/cart","?":{"id":"?*"}}]}]},"webcredentials":{"apps":["shop"]}}"#
        let location = AASA.SourceLocation(offset: 1, line: 1, column: 2)
        func direct(_ site: String) -> Site? {
            let bytes = Array(("[" + site + "]").utf8)
            return bytes.withUnsafeBufferPointer {
                DirectSiteDecoder.decode($0, at: location, lineStart: 0, path: .rootIndex(0), names: AppNames(Self.aliases))?.site
            }
        }
        #expect(direct(common) != nil)
        // Without the positions inside it, the site keeps its own and its hosts' and makes the same document.
        let bytes = Array(("[" + common + "]").utf8)
        let bare = bytes.withUnsafeBufferPointer {
            DirectSiteDecoder.decode(
                $0,
                at: location,
                lineStart: 0,
                path: .rootIndex(0),
                names: AppNames(Self.aliases),
                origins: .siteAndHosts
            )?
            .site
        }
        #expect(bare.map { Self.spelled($0.origin) } == direct(common).map { Self.spelled($0.origin) })
        #expect(bare.map { Self.spelled($0.hosts) } == direct(common).map { Self.spelled($0.hosts) })
        guard case .generated(let generated)? = bare?.source, let applinks = generated.applinks else {
            Issue.record("no generated applinks")
            return
        }
        #expect(applinks.origin.location == nil && applinks.details.allSatisfy { $0.components.allSatisfy { $0.origin.location == nil } })
        func document(_ site: Site?) -> [UInt8]? {
            var findings: [Diagnostic] = []
            let loaded = site.map {
                SiteBuilder.loadSite($0, configPath: "/c.json", readFile: { _ in .failure(FileReadError("none")) }, findings: &findings)
            }
            return findings.isEmpty ? loaded?.served.array : nil
        }
        #expect(document(bare) != nil && document(bare) == document(direct(common)))
        #expect(direct(common.replacingAll("\"shop\"]", with: "\"nosuch\"]")) == nil)
        #expect(direct(common.replacingAll("/cart", with: "/caf\\u00e9")) == nil)
        #expect(direct(common.replacingAll("\"exclude\":true", with: "\"exclude\":1")) == nil)
        #expect(direct(common.replacingAll("\"exclude\":true", with: "\"exclude\":true,\"exclude\":false")) == nil)
        #expect(direct(common.replacingAll("}]}]}", with: "},]}]}")) == nil)
        #expect(direct(String(common.dropLast())) == nil)
        // Keys that share a known key's first bytes, or its length and first seven bytes, are other keys.
        for key in [
            "webcredentialz", "hostsx", "hosts" + String(repeating: "x", count: 251), "webcredentials" + String(repeating: "x", count: 256),
        ] {
            #expect(direct(common.replacingAll("\"webcredentials\"", with: "\"\(key)\"")) == nil, "\(key)")
        }
        // Sixteen query items are looked through for duplicates; more go to the tree's parser.
        let items = (0..<17).map { #""q\#($0)":"*""# }
        let sixteen = common.replacingAll(#"{"id":"?*"}"#, with: "{" + items.prefix(16).joined(separator: ",") + "}")
        #expect(direct(sixteen) != nil)
        #expect(direct(common.replacingAll(#"{"id":"?*"}"#, with: "{" + items.joined(separator: ",") + "}")) == nil)
        Self.expectSame("[" + sixteen + "," + common.replacingAll(#"{"id":"?*"}"#, with: "{" + items.joined(separator: ",") + "}") + "]")
        Self.expectSame("[" + common + "," + common.replacingAll("shop0", with: "shop1") + "]")
        Self.expectSame("[" + common + ",]")
        Self.expectSame("[" + common + "," + common + "]")
    }
}
