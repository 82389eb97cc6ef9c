import Synchronization
import Testing

@testable import AASA

/// `"include": ["sites.d/*.json"]`, on an in-memory file system: positions per file, what a reload
/// reads, removal, and duplicates across files.
@Suite("Included site files")
struct IncludeTests {
    /// Files by path, with a stamp per content and a count of reads per path.
    final class Disk: Sendable {
        let files = Mutex<[String: String]>([:])
        let reads = Mutex<[String: Int]>([:])

        func write(_ path: String, _ text: String) { files.withLock { $0[path] = text } }
        func remove(_ path: String) { _ = files.withLock { $0.removeValue(forKey: path) } }
        func readCount(_ path: String) -> Int { reads.withLock { $0[path] ?? 0 } }

        var access: IncludeAccess {
            IncludeAccess(
                list: { directory in
                    self.files.withLock { files in
                        files.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }
                    }
                },
                stamp: { path in self.files.withLock { $0[path] }.map { "\($0.count):\($0.hashValue)" } }
            )
        }

        func load(reusing previous: LoadedConfig? = nil, servingOnly: Bool = false) -> LoadedConfig {
            let config = files.withLock { $0["/etc/aasa/config.json"] } ?? ""
            return ConfigLoader.load(
                configBytes: Array(config.utf8),
                configPath: "/etc/aasa/config.json",
                readFile: { path in
                    self.reads.withLock { $0[path, default: 0] += 1 }
                    guard let text = self.files.withLock({ $0[path] }) else { return .failure(FileReadError("no such file")) }
                    return .success(Array(text.utf8))
                },
                reusing: previous,
                servingOnly: servingOnly,
                includes: access
            )
        }
    }

    static func site(_ host: String, app: String = "shop") -> String {
        #"{"hosts": ["\#(host)"], "webcredentials": {"apps": ["\#(app)"]}}"#
    }

    func disk() -> Disk {
        let disk = Disk()
        disk.write(
            "/etc/aasa/config.json",
            #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [\#(Self.site("main.example.com"))], "include": ["sites.d/*.json"]}"#
        )
        disk.write("/etc/aasa/sites.d/a.json", Self.site("a.example.com"))
        disk.write("/etc/aasa/sites.d/b.json", "[\n  \(Self.site("b1.example.com")),\n  \(Self.site("b2.example.com"))\n]")
        disk.write("/etc/aasa/sites.d/notes.txt", "not a site")
        disk.write("/etc/aasa/sites.d/.a.json.swp", "{")
        return disk
    }

    @Test("Matching files load in name order after the config's own sites; other names and dot files are ignored")
    func loads() {
        let loaded = disk().load()
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics)")
        #expect(loaded.sites.map(\.site.name) == ["main.example.com", "a.example.com", "b1.example.com", "b2.example.com"])
        #expect(loaded.site(forHost: "b2.example.com")?.definedIn == "/etc/aasa/sites.d/b.json")
        #expect(loaded.includePatterns == ["/etc/aasa/sites.d/*.json"])
    }

    @Test("\"sites\": [] beside include is the tenant layout: no config.no-sites; a pattern with no file still says so")
    func emptyOwnSites() {
        let disk = disk()
        disk.write(
            "/etc/aasa/config.json",
            #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [], "include": ["sites.d/*.json"]}"#
        )
        let loaded = disk.load()
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics.map(\.rule))")
        #expect(loaded.sites.count == 3)
        disk.write(
            "/etc/aasa/config.json",
            #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [], "include": ["none.d/*.json"]}"#
        )
        #expect(disk.load().diagnostics.map(\.rule) == ["include.empty"])
        disk.write("/etc/aasa/config.json", #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": []}"#)
        #expect(disk.load().diagnostics.map(\.rule) == ["config.no-sites"])
    }

    @Test("A finding in an included file names that file, with the line, column and path inside it")
    func positions() {
        let disk = disk()
        disk.write("/etc/aasa/sites.d/b.json", "[\n  \(Self.site("b1.example.com")),\n  \(Self.site("b2.example.com", app: "shopp"))\n]")
        let finding = disk.load().diagnostics.first { $0.rule == "app.unknown" }
        #expect(finding?.file == "/etc/aasa/sites.d/b.json")
        #expect(finding?.location?.line == 3)
        #expect(finding?.path == "$[1].webcredentials.apps[0]")
    }

    @Test("A reload reads only the files that changed; removing a file removes its sites; a new file adds them")
    func reloadReadsChangedFiles() {
        let disk = disk()
        let first = disk.load(servingOnly: true)
        #expect(disk.readCount("/etc/aasa/sites.d/a.json") == 1)
        disk.write("/etc/aasa/sites.d/b.json", "[\(Self.site("b1.example.com")), \(Self.site("b3.example.com"))]")
        let second = disk.load(reusing: first, servingOnly: true)
        #expect(disk.readCount("/etc/aasa/sites.d/a.json") == 1, "unchanged: not read again")
        #expect(disk.readCount("/etc/aasa/sites.d/b.json") == 2)
        #expect(second.sites[1] === first.sites[1], "the unchanged file's site is the same object")
        #expect(second.site(forHost: "b3.example.com") != nil && second.site(forHost: "b2.example.com") == nil)
        disk.remove("/etc/aasa/sites.d/a.json")
        disk.write("/etc/aasa/sites.d/c.json", Self.site("c.example.com"))
        let third = disk.load(reusing: second, servingOnly: true)
        #expect(third.site(forHost: "a.example.com") == nil)
        #expect(third.site(forHost: "c.example.com")?.definedIn == "/etc/aasa/sites.d/c.json")
        #expect(third.diagnostics.isEmpty)
    }

    @Test("A reload takes each unchanged file's sites over as one object; positions and lookups stay right as files come and go")
    func groupsCarryOver() {
        let disk = disk()
        let first = disk.load(servingOnly: true)
        #expect(first.sites.groups.map(\.source) == [nil, "/etc/aasa/sites.d/a.json", "/etc/aasa/sites.d/b.json"])
        // Same hosts, another app: b.json is rebuilt; a.json is not even looked into.
        disk.write(
            "/etc/aasa/sites.d/b.json",
            "[\(Self.site("b1.example.com")), \(Self.site("b2.example.com", app: "ABCDE12345.com.other"))]"
        )
        let second = disk.load(reusing: first, servingOnly: true)
        #expect(second.diagnostics.isEmpty, "\(second.diagnostics)")
        #expect(second.sites.groups[1] === first.sites.groups[1])
        #expect(second.sites.groups[2] !== first.sites.groups[2])
        #expect(second.sites.locate(3) == (2, 1))
        #expect(second.site(forHost: "b2.example.com") === second.sites[3])
        #expect(String(decoding: second.sites[3].bytes, as: UTF8.self).contains("ABCDE12345.com.other"))
        // A new file before the others: every other file keeps its positions, and every lookup stays right.
        disk.write("/etc/aasa/sites.d/0.json", Self.site("zero.example.com"))
        let third = disk.load(reusing: second, servingOnly: true)
        #expect(third.sites.groups[2] === second.sites.groups[1])
        for host in ["main.example.com", "zero.example.com", "a.example.com", "b1.example.com", "b2.example.com"] {
            #expect(third.site(forHost: host)?.site.name == host)
        }
    }

    @Test(
        "Files added, removed and edited among many: the updated host table answers every host as a fresh load does, and a host claimed twice is the same error"
    )
    func tableUpdatedForChangedFiles() {
        let disk = Disk()
        disk.write(
            "/etc/aasa/config.json",
            #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [], "include": ["sites.d/*.json"]}"#
        )
        func file(_ number: Int, hosts: [String]? = nil) {
            let names = hosts ?? (0..<10).map { "h\(number)-\($0).example.com" }
            disk.write("/etc/aasa/sites.d/t\(100 + number).json", "[" + names.map { Self.site($0) }.joined(separator: ", ") + "]")
        }
        for number in 0..<80 { file(number) }
        let first = disk.load(servingOnly: true)
        #expect(!first.hasErrors)
        // A file sorted first, one removed, one edited with a host moved in from the removed file.
        disk.write("/etc/aasa/sites.d/a-new.json", Self.site("new.example.com"))
        disk.remove("/etc/aasa/sites.d/t105.json")
        file(10, hosts: (0..<9).map { "h10-\($0).example.com" } + ["h5-3.example.com"])
        let second = disk.load(reusing: first, servingOnly: true)
        let fresh = disk.load(servingOnly: true)
        #expect(!second.hasErrors, "\(second.diagnostics)")
        let everyHost = (0..<80).flatMap { number in (0..<10).map { "h\(number)-\($0).example.com" } } + ["new.example.com"]
        for host in everyHost {
            #expect(second.site(forHost: host)?.site.name == fresh.site(forHost: host)?.site.name, "\(host)")
            #expect(second.site(forHost: host)?.bytes == fresh.site(forHost: host)?.bytes, "\(host)")
        }
        #expect(second.site(forHost: "h5-0.example.com") == nil)
        #expect(second.site(forHost: "h5-3.example.com")?.definedIn == "/etc/aasa/sites.d/t110.json")
        #expect(second.site(forHost: "h10-9.example.com") == nil)
        // Files taken over keep their positions: a later file's hosts did not move.
        #expect(second.hostTable.lookup("h39-0.example.com") == first.hostTable.lookup("h39-0.example.com"))
        // A new file claiming a host another file has: the error a fresh load reports, naming the first.
        disk.write("/etc/aasa/sites.d/b-dup.json", Self.site("h20-1.example.com"))
        let third = disk.load(reusing: second, servingOnly: true)
        let freshThird = disk.load(servingOnly: true)
        #expect(third.diagnostics.map(\.description) == freshThird.diagnostics.map(\.description))
        #expect(third.diagnostics.first { $0.rule == "host.duplicate" }?.file == "/etc/aasa/sites.d/t120.json")
    }

    @Test("Identical documents are held once, whichever file their sites are in; a different one has its own")
    func identicalDocumentsShared() {
        let disk = disk()
        disk.write("/etc/aasa/sites.d/c.json", Self.site("c.example.com", app: "ABCDE12345.com.other"))
        let loaded = disk.load(servingOnly: true)
        let served = loaded.sites.map(\.served)
        #expect(loaded.sites.map(\.site.name).last == "c.example.com")
        #expect(served.dropLast().allSatisfy { $0.isSame(as: served[0]) }, "main, a, b1 and b2 serve the same bytes")
        #expect(served.last?.isSame(as: served[0]) == false)
        #expect(String(decoding: loaded.sites[4].bytes, as: UTF8.self).contains("ABCDE12345.com.other"))
    }

    @Test("A host claimed by two files is an error in the second, naming the first file; a broken file is an error naming it")
    func errors() {
        let disk = disk()
        disk.write("/etc/aasa/sites.d/c.json", Self.site("a.example.com"))
        let duplicate = disk.load().diagnostics.first { $0.rule == "host.duplicate" }
        #expect(duplicate?.file == "/etc/aasa/sites.d/c.json")
        #expect(duplicate?.message.contains("in /etc/aasa/sites.d/a.json") == true, "\(String(describing: duplicate))")
        disk.write("/etc/aasa/sites.d/c.json", #"{"hosts": ["c.example.com"], "webcredentials": {"apps": ["shop"]},}"#)
        let broken = disk.load().diagnostics.filter { $0.severity == .error }
        #expect(broken.first?.file == "/etc/aasa/sites.d/c.json")
        #expect(broken.first?.rule == "json.trailing-comma")
        disk.write("/etc/aasa/sites.d/c.json", "42")
        #expect(disk.load().diagnostics.contains { $0.rule == "include.not-sites" })
        disk.write(
            "/etc/aasa/config.json",
            #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "include": ["tenants/*.json", "missing.json"]}"#
        )
        let rules = disk.load().diagnostics.map(\.rule)
        #expect(rules.contains("include.empty") && rules.contains("include.missing"), "\(rules)")
    }

    @Test("Glob patterns: * any run, ? one character, the rest literal")
    func glob() {
        #expect(Glob.matches("*.json", "a.json") && Glob.matches("*.json", ".json") && !Glob.matches("*.json", "a.json.bak"))
        #expect(Glob.matches("tenant-??.json", "tenant-07.json") && !Glob.matches("tenant-??.json", "tenant-7.json"))
        #expect(Glob.matches("*", "anything") && Glob.matches("a*b*c", "aXXbYYc") && !Glob.matches("a*b*c", "aXXbYY"))
    }
}
