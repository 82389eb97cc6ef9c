import Synchronization
import Testing

@testable import AASA

/// The snapshot of included files (`compiled-sites` in the state directory): a restart takes unchanged
/// files' sites from it, exactly as a full load builds them; anything damaged, stale or of another build
/// or `apps` is ignored and the files are read.
@Suite("Compiled sites: the included files' snapshot")
struct CompiledSitesTests {
    static let build = "test-build"
    static let configPath = "/etc/aasa/config.json"

    /// A fleet config: `files` tenant files of `perFile` sites each (apex and www hosts, generated AASA,
    /// every third site with Android apps, one single-object file), kept in a state directory.
    static func disk(
        files: Int,
        perFile: Int,
        sites ownSites: String = "",
        apps: String =
            #""shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]}}"#
    )
        -> IncludeTests.Disk
    {
        let disk = IncludeTests.Disk()
        disk.write(
            configPath,
            #"{"version": 1, "apps": {\#(apps)}, "sites": [\#(ownSites)], "include": ["sites.d/*.json"], "server": {"stateDirectory": "state"}}"#
        )
        var index = 0
        for file in 0..<files {
            var sites: [String] = []
            for _ in 0..<perFile {
                let android = index % 3 == 0 ? #", "android": ["shop"]"# : ""
                sites.append(
                    #"{"hosts": ["shop\#(index).example.com", "www.shop\#(index).example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/admin/*", "exclude": true}, {"/": "/product/\#(index)/*"}]}]}, "webcredentials": {"apps": ["shop"]}\#(android)}"#
                )
                index += 1
            }
            disk.write("/etc/aasa/sites.d/tenants-\(file).json", "[\n  " + sites.joined(separator: ",\n  ") + "\n]")
        }
        disk.write("/etc/aasa/sites.d/single.json", #"{"hosts": ["single.example.com"], "webcredentials": {"apps": ["shop"]}}"#)
        return disk
    }

    /// Loads the way `serve` does, restoring from `snapshot` (as read from the state directory).
    static func load(_ disk: IncludeTests.Disk, snapshot: [UInt8]?, build: String = build) -> LoadedConfig {
        let config = disk.files.withLock { $0[configPath] } ?? ""
        let input = CompiledSites.Input(build: build, compress: compressed) { directory in
            #expect(directory == "/etc/aasa/state")
            return snapshot.flatMap(CompiledSites.decode)
        }
        return ConfigLoader.load(
            configBytes: Array(config.utf8),
            configPath: configPath,
            readFile: { path in
                disk.reads.withLock { $0[path, default: 0] += 1 }
                guard let text = disk.files.withLock({ $0[path] }) else { return .failure(FileReadError("no such file")) }
                return .success(Array(text.utf8))
            },
            servingOnly: true,
            includes: disk.access,
            compiled: input
        )
    }

    static func snapshot(of config: LoadedConfig, build: String = build) -> [UInt8] {
        CompiledSites.encode(config, configPath: configPath, build: build, servingOnly: true).map { Array($0.joined()) } ?? []
    }

    /// A stand-in for the server's gzip form: recognisably made from the document, empty for a small one.
    @Sendable static func compressed(_ body: [UInt8]) -> [UInt8] { body.count < 1024 ? [] : Array("gz ".utf8) + body.prefix(16) }

    /// Everything serving and later reloads read of a site, as text: equal texts, equal sites.
    static func describe(_ loaded: LoadedSite) -> String {
        let site = loaded.site
        let hosts = site.hosts.map {
            "\($0.value) at \($0.origin.location.map { "\($0.line):\($0.column)@\($0.offset)" } ?? "-") \($0.origin.path)"
        }
        let source: String
        switch site.source {
        case .generated: source = "generated"
        case .file(let file): source = "file \(file.value)"
        case .none: source = "none"
        }
        let android: String
        switch site.android {
        case nil: android = "no android"
        case .generated(let apps): android = "android generated \(apps.count)"
        case .file(let file): android = "android file \(file.value)"
        }
        return [
            hosts.joined(separator: ", "), source, android, "links \(site.links != nil)",
            "origin \(site.origin.location.map { "\($0.line):\($0.column)@\($0.offset)" } ?? "-") \(site.origin.path)",
            "served \(loaded.bytes)", "assetlinks \(loaded.assetLinks.map { "\($0.bytes) \($0.file ?? "-")" } ?? "-")",
            "file \(loaded.file ?? "-")", "definedIn \(loaded.definedIn ?? "-")", "serving \(loaded.isServingForm)",
            "landing \(loaded.landingPage != nil)",
        ].joined(separator: " | ")
    }

    @Test("10,000 sites in 20 files: a start from the snapshot builds nothing, and every site is what a full load builds")
    func restoresExactly() throws {
        let disk = Self.disk(files: 20, perFile: 500)
        let full = Self.load(disk, snapshot: nil)
        #expect(!full.hasErrors, "\(full.diagnostics)")
        #expect(full.parsedIncludedFiles == 21 && full.restoredIncludedFiles == 0)
        let bytes = Self.snapshot(of: full)
        #expect(!bytes.isEmpty)

        let restored = Self.load(disk, snapshot: bytes)
        #expect(restored.restoredIncludedFiles == 21 && restored.parsedIncludedFiles == 0)
        #expect(restored.diagnostics.isEmpty, "\(restored.diagnostics)")
        let builtSites = full.sites.map(Self.describe)
        let restoredSites = restored.sites.map(Self.describe)
        #expect(builtSites.count == 10_001)
        #expect(restoredSites == builtSites)
        for index in [0, 1, 2, 4_999, 9_999] {
            for host in ["shop\(index).example.com", "www.shop\(index).example.com"] {
                #expect(restored.site(forHost: host).map(Self.describe) == full.site(forHost: host).map(Self.describe), "\(host)")
            }
        }
        // A snapshot of the restored load is the same snapshot: nothing drifts from one start to the next.
        #expect(Self.snapshot(of: restored) == bytes)
    }

    @Test("A tenant file changed while the server was down is built from its bytes; the others are restored")
    func changedFile() throws {
        let disk = Self.disk(files: 4, perFile: 50)
        let bytes = Self.snapshot(of: Self.load(disk, snapshot: nil))
        let path = "/etc/aasa/sites.d/tenants-2.json"
        let text = try #require(disk.files.withLock { $0[path] })
        disk.write(path, text.replacing("/product/100/*", with: "/product/100/spring/*"))
        let restarted = Self.load(disk, snapshot: bytes)
        #expect(restarted.restoredIncludedFiles == 4 && restarted.parsedIncludedFiles == 1)
        let served = String(decoding: try #require(restarted.site(forHost: "shop100.example.com")).bytes, as: UTF8.self)
        #expect(served.contains("/product/100/spring/*"), "\(served)")
        let unchanged = String(decoding: try #require(restarted.site(forHost: "shop101.example.com")).bytes, as: UTF8.self)
        #expect(unchanged.contains("/product/101/*"), "\(unchanged)")
    }

    @Test("Another build or another apps table restores nothing")
    func otherContext() {
        let disk = Self.disk(files: 3, perFile: 10)
        let bytes = Self.snapshot(of: Self.load(disk, snapshot: nil))
        let otherBuild = Self.load(disk, snapshot: bytes, build: "another build")
        #expect(otherBuild.restoredIncludedFiles == 0 && otherBuild.parsedIncludedFiles == 4)
        let otherApps = Self.disk(files: 3, perFile: 10, apps: #""shop": "ZYXWV98765.com.example.shop""#)
        let loaded = Self.load(otherApps, snapshot: bytes)
        #expect(loaded.restoredIncludedFiles == 0 && loaded.parsedIncludedFiles == 4)
        let served = String(decoding: loaded.site(forHost: "shop1.example.com")?.bytes ?? [], as: UTF8.self)
        #expect(served.contains("ZYXWV98765"), "\(served)")
    }

    @Test("Truncated, flipped or of another format version: the snapshot is refused whole")
    func damaged() throws {
        let disk = Self.disk(files: 3, perFile: 20, sites: #"{"hosts": ["big.example.com"], "file": "big.aasa"}"#)
        disk.write("/etc/aasa/big.aasa", Self.hostedDocument(paths: 40))
        let bytes = Self.snapshot(of: Self.load(disk, snapshot: nil))
        #expect(CompiledSites.decode(bytes) != nil)
        for length in [0, 7, CompiledSites.headerSize - 1, CompiledSites.headerSize, bytes.count / 2, bytes.count - 1] {
            #expect(CompiledSites.decode(Array(bytes.prefix(length))) == nil, "truncated to \(length)")
        }
        #expect(CompiledSites.decode(bytes + [0]) == nil, "a byte after the end")
        // Every byte of the header and a spread of the rest, each flipped on its own.
        let positions = Array(0..<CompiledSites.headerSize) + Array(stride(from: CompiledSites.headerSize, to: bytes.count, by: 97))
        for position in positions {
            var flipped = bytes
            flipped[position] ^= 0x20
            #expect(CompiledSites.decode(flipped) == nil, "byte \(position) flipped")
        }
        // The next version with a checksum that matches it: read as a format this build does not know.
        var newer = bytes
        newer[8] = UInt8(CompiledSites.formatVersion + 1)
        let headerChecksum = newer.withUnsafeBytes {
            FNV1a.wordHash(UnsafeRawBufferPointer(rebasing: $0[..<(CompiledSites.headerSize - 8)]))
        }
        withUnsafeBytes(of: headerChecksum.littleEndian) {
            newer.replaceSubrange((CompiledSites.headerSize - 8)..<CompiledSites.headerSize, with: $0)
        }
        #expect(CompiledSites.decode(newer) == nil)
        // And a load given nothing usable reads every file.
        let loaded = Self.load(disk, snapshot: Array(bytes.dropLast()))
        #expect(loaded.restoredIncludedFiles == 0 && loaded.parsedIncludedFiles == 4)
        #expect(loaded.restoredHostedDocuments == 0 && loaded.checkedHostedDocuments.count == 1)
    }

    /// A valid hosted AASA file of `paths` components (a few KB), with App Clips when asked.
    static func hostedDocument(paths: Int, appClips: Bool = false, salt: String = "") -> String {
        let components = (0..<paths).map { #"{"/": "/\#(salt)catalog/\#($0)/*", "comment": "category \#($0)"}"# }
        let clips = appClips ? #", "appclips": {"apps": ["ABCDE12345.com.example.shop.Clip"]}"# : ""
        return #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": ["#
            + components.joined(separator: ", ") + "]}]}\(clips)}"
    }

    @Test(
        "A hosted document checked without a finding is kept by its bytes' digest with its gzip form: a restart serves the same bytes unchecked, with the same findings; a changed, a warned or a link site's document is checked"
    )
    func hostedDocuments() throws {
        let own = [
            #"{"hosts": ["big.example.com"], "file": "big.aasa"}"#,
            // The same bytes for a second site: kept once.
            #"{"hosts": ["twin.example.com"], "file": "big.aasa"}"#,
            #"{"hosts": ["clips.example.com"], "file": "clips.aasa"}"#,
            // A warning in the file (two rules for one path): never kept, its finding shown at every start.
            #"{"hosts": ["warned.example.com"], "file": "warned.aasa"}"#,
            // Link rules are checked against the document: a site with them always reads it.
            #"{"hosts": ["go.example.com"], "file": "go.aasa", "links": {"app": "shop", "rules": [{"/": "/catalog/0/*", "web": "https://shop.example.com/{1}"}]}}"#,
        ].joined(separator: ", ")
        let disk = Self.disk(files: 1, perFile: 2, sites: own)
        disk.write("/etc/aasa/big.aasa", Self.hostedDocument(paths: 200))
        disk.write("/etc/aasa/clips.aasa", Self.hostedDocument(paths: 3, appClips: true))
        disk.write(
            "/etc/aasa/warned.aasa",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/a/*"}, {"/": "/a/*"}]}]}}"#
        )
        disk.write("/etc/aasa/go.aasa", Self.hostedDocument(paths: 1))
        let full = Self.load(disk, snapshot: nil)
        #expect(!full.hasErrors, "\(full.diagnostics)")
        #expect(full.diagnostics.contains { $0.file == "/etc/aasa/warned.aasa" }, "\(full.diagnostics)")
        #expect(full.checkedHostedDocuments.count == 2 && full.restoredHostedDocuments == 0)
        let bytes = Self.snapshot(of: full)
        let snapshot = try #require(CompiledSites.decode(bytes))
        #expect(snapshot.documentCount == 2)

        let restored = Self.load(disk, snapshot: bytes)
        #expect(restored.restoredHostedDocuments == 2 && restored.checkedHostedDocuments.isEmpty)
        #expect(restored.sites.map(Self.describe) == full.sites.map(Self.describe))
        #expect(restored.diagnostics.map(\.description) == full.diagnostics.map(\.description))
        let big = try #require(restored.site(forHost: "big.example.com"))
        #expect(
            big.preparedGzip?.isMade == true && big.preparedGzip?.bytes().array == Self.compressed(big.bytes),
            "the gzip form the snapshot kept"
        )
        #expect(restored.site(forHost: "clips.example.com")?.preparedGzip?.bytes().count == 0, "a small document: nothing to compress")
        #expect(restored.site(forHost: "warned.example.com")?.preparedGzip == nil)
        #expect(restored.site(forHost: "go.example.com")?.preparedGzip == nil)
        // The checking load makes no form: the first to ask makes it (here the snapshot's writer, above).
        let checked = try #require(Self.load(disk, snapshot: nil).site(forHost: "big.example.com")?.preparedGzip)
        #expect(!checked.isMade)
        #expect(checked.bytes().array == Self.compressed(big.bytes) && checked.isMade)
        // Restarting from the restored load keeps the same snapshot.
        #expect(Self.snapshot(of: restored) == bytes)

        // Changed while the server was down: checked, and a mistake in it is found although the old bytes were kept.
        disk.write("/etc/aasa/big.aasa", #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "paths": 7}]}}"#)
        let changed = Self.load(disk, snapshot: bytes)
        #expect(changed.hasErrors)
        #expect(changed.diagnostics.contains { $0.file == "/etc/aasa/big.aasa" && $0.severity == .error }, "\(changed.diagnostics)")
        #expect(changed.restoredHostedDocuments == 1, "clips.aasa still restored")

        // The App Clips document on a wildcard host (same apps, so the snapshot's context): its kept flag
        // gives the site's error as a full check does.
        let wildcard = Self.disk(files: 1, perFile: 2, sites: #"{"hosts": ["*.clips.example.com"], "file": "clips.aasa"}"#)
        wildcard.write("/etc/aasa/clips.aasa", Self.hostedDocument(paths: 3, appClips: true))
        let wildcardFull = Self.load(wildcard, snapshot: nil)
        let wildcardRestored = Self.load(wildcard, snapshot: bytes)
        #expect(wildcardRestored.restoredHostedDocuments == 1)
        #expect(wildcardFull.diagnostics.contains { $0.rule == "appclips.wildcard-host" }, "\(wildcardFull.diagnostics)")
        #expect(wildcardRestored.diagnostics.map(\.description) == wildcardFull.diagnostics.map(\.description))
    }

    @Test("Files the snapshot could not rebuild exactly are left out: link rules, a hosted document, a finding")
    func leftOut() throws {
        let disk = Self.disk(files: 1, perFile: 3)
        disk.write(
            "/etc/aasa/sites.d/links.json",
            #"{"hosts": ["go.example.com"], "links": {"app": "shop", "rules": [{"/": "/p/*", "web": "https://shop.example.com/item/{1}"}]}, "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/p/*"}]}]}}"#
        )
        disk.write("/etc/aasa/sites.d/hosted.json", #"{"hosts": ["hosted.example.com"], "file": "hosted.aasa"}"#)
        for path in ["/etc/aasa/sites.d/hosted.aasa", "/etc/aasa/hosted.aasa"] {
            disk.write(path, #"{"webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}"#)
        }
        // Two rules for one path: the second is unreachable, a warning.
        disk.write(
            "/etc/aasa/sites.d/warned.json",
            #"{"hosts": ["warned.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/a/*"}, {"/": "/a/*"}]}]}}"#
        )
        let full = Self.load(disk, snapshot: nil)
        #expect(!full.hasErrors, "\(full.diagnostics)")
        #expect(full.diagnostics.contains { $0.file == "/etc/aasa/sites.d/warned.json" })
        let snapshot = try #require(CompiledSites.decode(Self.snapshot(of: full)))
        #expect(Set(snapshot.entries.keys) == ["sites.d/tenants-0.json", "sites.d/single.json"])
        let restored = Self.load(disk, snapshot: Self.snapshot(of: full))
        #expect(restored.restoredIncludedFiles == 2 && restored.parsedIncludedFiles == 3)
        #expect(restored.sites.map(Self.describe).sorted() == full.sites.map(Self.describe).sorted())
        #expect(restored.diagnostics.map(\.description) == full.diagnostics.map(\.description))
    }
}
