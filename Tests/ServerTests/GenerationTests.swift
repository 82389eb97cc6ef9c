import AASA
import Foundation
import HTTP1
import Synchronization
import TLS
import TestSupport
import Testing

@testable import Server

/// A file system in memory: what a generation reads, and a record of what it read.
final class MemoryFiles: Sendable {
    private let contents = Mutex<[String: [UInt8]]>([:])
    private let readPaths = Mutex<[String]>([])

    func write(_ path: String, _ text: String) { write(path, Array(text.utf8)) }
    func write(_ path: String, _ bytes: [UInt8]) { contents.withLock { $0[path] = bytes } }
    var reads: [String] { readPaths.withLock { $0 } }

    var reader: GenerationInputs.FileReader {
        { path, limit in
            self.readPaths.withLock { $0.append(path) }
            guard let bytes = self.contents.withLock({ $0[path] }) else { return .failure(FileReadError("no such file")) }
            return bytes.count > limit ? .failure(FileReadError("over the limit")) : .success(bytes)
        }
    }

    /// Directories list the files whose paths start with them; a file's stamp is its content's hash.
    var includes: IncludeAccess {
        IncludeAccess(
            list: { directory in
                let prefix = directory.hasSuffix("/") ? directory : directory + "/"
                return self.contents.withLock { files in
                    files.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map {
                        String($0.dropFirst(prefix.count))
                    }
                }
            },
            stamp: { path in self.contents.withLock { $0[path] }.map { String(FNV1a.hash($0, startingWith: FNV1a.offsetBasis)) } }
        )
    }

    func inputs(
        now: Double,
        certificates: CertificateSupply = .files(),
        options: GenerationOptions = GenerationOptions()
    ) -> GenerationInputs {
        GenerationInputs(
            configPath: "/etc/aasa/config.json",
            configBytes: contents.withLock { $0["/etc/aasa/config.json"] } ?? [],
            readFile: reader,
            includes: includes,
            certificates: certificates,
            options: options,
            now: now
        )
    }
}

/// `Generation.next` without files or sockets: fixtures in memory, generations compared as values.
@Suite("Generations (no files, no sockets)")
struct GenerationTests {
    /// Now: the test certificates are valid from the moment they are made.
    static let start = Date().timeIntervalSince1970.rounded()

    static func config(shopPath: String = "/product/*", server: String = #"{"listen": ["127.0.0.1:8080"]}"#) -> String {
        #"""
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
         "include": ["sites.d/*.json"],
         "sites": [{"hosts": ["shop.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "\#(shopPath)"}]}]}},
                   {"hosts": ["hosted.example.com"], "file": "hosted.aasa"}],
         "server": \#(server)}
        """#
    }

    static func files(_ config: String = config()) -> MemoryFiles {
        let files = MemoryFiles()
        files.write("/etc/aasa/config.json", config)
        files.write(
            "/etc/aasa/hosted.aasa",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.hosted"], "components": [{"/": "/h/*"}]}]}}"#
        )
        files.write(
            "/etc/aasa/sites.d/tenant.json",
            #"{"hosts": ["tenant.example.com"], "applinks": {"details": [{"apps": ["ABCDE12345.com.example.tenant"], "components": [{"/": "/t/*"}]}]}}"#
        )
        return files
    }

    func served(_ generation: ServedGeneration, _ host: String) -> SiteResponses? {
        generation.snapshot.hosts.lookup(host).map { generation.snapshot.site(at: $0) }
    }

    func next(_ previous: ServedGeneration?, _ inputs: GenerationInputs) throws -> ServedGeneration {
        switch Generation.next(from: previous, inputs: inputs) {
        case .success(let generation): return generation
        case .failure(let rejected): throw TestFailure("rejected: \(rejected.errors)")
        }
    }

    @Test("A first generation from memory serves every site: the config's own, a hosted file, an included file")
    func first() throws {
        let files = Self.files()
        let generation = try next(nil, files.inputs(now: Self.start))
        #expect(generation.number == 1)
        #expect(generation.needsRestart.isEmpty && !generation.certificatesReplaced)
        for host in ["shop.example.com", "hosted.example.com", "tenant.example.com"] {
            #expect(served(generation, host)?.lastModified == Int(Self.start), "\(host)")
        }
        #expect(generation.files.contains("/etc/aasa/hosted.aasa"))
        #expect(generation.files.contains("/etc/aasa/sites.d/*.json"))
    }

    @Test("A reload that edits one site: both reuse passes keep everything else (loaded sites, prepared responses, Last-Modified)")
    func reuse() throws {
        let files = Self.files()
        let first = try next(nil, files.inputs(now: Self.start))
        files.write("/etc/aasa/config.json", Self.config(shopPath: "/catalogue/*"))
        let second = try next(first, files.inputs(now: Self.start + 100))
        #expect(second.number == 2)
        #expect(served(second, "shop.example.com")?.lastModified == Int(Self.start) + 100)
        // Unchanged documents: the same prepared responses, so the same ETag and Last-Modified.
        #expect(served(second, "hosted.example.com") === served(first, "hosted.example.com"))
        #expect(served(second, "tenant.example.com") === served(first, "tenant.example.com"))
        // The loader took the included file's sites over as one object.
        #expect(second.config.sites.groups.last === first.config.sites.groups.last)
        #expect(second.snapshot.changes.summary.contains("shop.example.com"), "\(second.snapshot.changes.summary)")
    }

    @Test("A config with errors is rejected, naming the generation that keeps serving; so is one that cannot read a file")
    func rejected() throws {
        let files = Self.files()
        let first = try next(nil, files.inputs(now: Self.start))
        files.write(
            "/etc/aasa/config.json",
            Self.config(shopPath: "/product/*").replacingOccurrences(of: #""apps": ["shop"]"#, with: #""apps": ["shopp"]"#)
        )
        guard case .failure(let refused) = Generation.next(from: first, inputs: files.inputs(now: Self.start + 1)) else {
            Issue.record("a config with an unknown app name was served")
            return
        }
        #expect(refused.generation == 1)
        #expect(refused.errors.map(\.rule) == ["app.unknown"])
        files.write("/etc/aasa/config.json", Self.config())
        files.write("/etc/aasa/hosted.aasa", "{")
        guard case .failure(let broken) = Generation.next(from: first, inputs: files.inputs(now: Self.start + 2)) else {
            Issue.record("a broken hosted file was served")
            return
        }
        #expect(broken.errors.contains { $0.rule == "json.truncated" || $0.rule == "json.syntax" }, "\(broken.errors)")
    }

    @Test("Settings: applied ones change, restart ones keep their running value and are named; overrides are never changes")
    func settings() throws {
        let files = Self.files(Self.config(server: #"{"listen": ["0.0.0.0:8080"], "accessLog": true}"#))
        // The command line moves the listener (serve --listen): the config's value must not read as a change.
        let options = GenerationOptions { configured in
            var settings = configured
            settings.listeners = [.init(address: "127.0.0.1", port: 0)]
            return settings
        }
        let first = try next(nil, files.inputs(now: Self.start, options: options))
        files.write(
            "/etc/aasa/config.json",
            Self.config(server: #"{"listen": ["0.0.0.0:9999"], "accessLog": false, "logFormat": "json", "cacheControl": "max-age=60"}"#)
        )
        let second = try next(first, files.inputs(now: Self.start + 1, options: options))
        #expect(second.needsRestart == ["server.accessLog"], "\(second.needsRestart)")
        #expect(second.settings.accessLog == true, "kept until a restart")
        #expect(second.settings.logFormat == .json && second.settings.cacheControl == "max-age=60", "applied")
        #expect(second.settings.listeners == [.init(address: "127.0.0.1", port: 0)])
        // Applied means served: the new Cache-Control is in the prepared responses.
        #expect(second.snapshot.cacheControl == "max-age=60")
    }

    @Test("Every stored setting is decided once: applied on reload or named as needing a restart")
    func everySettingDecided() {
        let stored = Mirror(reflecting: ServerSettings()).children.count
        // reload.watch covers two stored values (watchFiles and forcePolling).
        #expect(SettingsReload.keys.count == stored, "\(stored) stored settings, \(SettingsReload.keys.count) decided")
    }

    @Test("Certificates enter through the supply: read from the reader, replaced ones reported, none read for documents only")
    func certificates() throws {
        let authority = try DevCertificates.makeAuthority(commonName: "generation test CA")
        let hosts = ["shop.example.com", "hosted.example.com", "tenant.example.com"]
        let leaf = try DevCertificates.makeLeaf(hosts: hosts, authority: authority)
        let server =
            #"{"listen": [{"address": "127.0.0.1", "port": 8443, "tls": true}], "certificates": [{"hosts": ["shop.example.com", "hosted.example.com", "tenant.example.com"], "certificate": "tls/cert.pem", "key": "tls/key.pem"}]}"#
        let files = Self.files(Self.config(server: server))
        files.write("/etc/aasa/tls/cert.pem", leaf.certificate)
        files.write("/etc/aasa/tls/key.pem", leaf.key)
        let first = try next(nil, files.inputs(now: Self.start))
        #expect(first.snapshot.tls != nil)
        #expect(first.files.contains("/etc/aasa/tls/cert.pem"))
        // The same certificate again: not "replaced".
        let same = try next(first, files.inputs(now: Self.start + 1))
        #expect(!same.certificatesReplaced)
        let renewed = try DevCertificates.makeLeaf(hosts: hosts, authority: authority)
        files.write("/etc/aasa/tls/cert.pem", renewed.certificate)
        files.write("/etc/aasa/tls/key.pem", renewed.key)
        let third = try next(same, files.inputs(now: Self.start + 2))
        #expect(third.certificatesReplaced)
        #expect(third.snapshot.tls !== same.snapshot.tls)
        // Documents only (generate, match, check): no certificate or key is read.
        let documents = Self.files(Self.config(server: server))
        _ = Generation.load(documents.inputs(now: Self.start, certificates: .notRead))
        #expect(!documents.reads.contains { $0.hasSuffix(".pem") }, "\(documents.reads)")
    }

    @Test(
        "Hundreds of sites in files of different sizes, empty ones among them: every position's responses are its own site's, built in parallel, on the first generation and after a reload that edits a site, adds a file and keeps the rest"
    )
    func manySitesBuiltInParallel() throws {
        let files = Self.files()
        func tenant(_ file: Int, _ site: Int, path: String = "/t/*") -> String {
            #"{"hosts": ["s\#(site).f\#(file).example.com"], "applinks": {"details": [{"apps": ["ABCDE12345.com.example.t\#(file)x\#(site)"], "components": [{"/": "\#(path)"}]}]}}"#
        }
        // 0, 1, 7, …: more than the 256 sites a snapshot builds on one thread, in runs of every length.
        let sizes = [0, 1, 7, 0, 130, 64, 3, 90, 0, 41]
        for (file, count) in sizes.enumerated() {
            files.write("/etc/aasa/sites.d/f\(file).json", "[" + (0..<count).map { tenant(file, $0) }.joined(separator: ",") + "]")
        }
        func expectOwnResponses(_ generation: ServedGeneration, _ label: String) {
            let sites = generation.config.sites
            var checked = 0
            for (position, loaded) in sites.positioned {
                let responses = generation.snapshot.site(at: position)
                #expect(responses.builtFrom === loaded, "\(label): position \(position)")
                #expect(responses.identity.bodyBytes.elementsEqual(loaded.served.buffer), "\(label): \(loaded.label)")
                checked += 1
            }
            #expect(checked == sites.count && checked >= 3 + sizes.reduce(0, +))
        }
        let first = try next(nil, files.inputs(now: Self.start))
        expectOwnResponses(first, "first")
        // One site edited in the middle of a file, a file added, the rest untouched.
        files.write(
            "/etc/aasa/sites.d/f4.json",
            "[" + (0..<130).map { tenant(4, $0, path: $0 == 65 ? "/edited/*" : "/t/*") }.joined(separator: ",") + "]"
        )
        files.write("/etc/aasa/sites.d/f99.json", "[" + (0..<300).map { tenant(99, $0) }.joined(separator: ",") + "]")
        let second = try next(first, files.inputs(now: Self.start + 100))
        expectOwnResponses(second, "reload")
        #expect(served(second, "s65.f4.example.com")?.lastModified == Int(Self.start) + 100)
        // Its neighbours in the edited file are new objects with the same prepared responses.
        #expect(served(second, "s64.f4.example.com")?.identity === served(first, "s64.f4.example.com")?.identity)
        #expect(served(second, "s64.f4.example.com")?.lastModified == Int(Self.start))
        #expect(served(second, "s299.f99.example.com")?.lastModified == Int(Self.start) + 100)
        #expect(served(second, "s89.f7.example.com") === served(first, "s89.f7.example.com"))
        #expect(second.snapshot.changes.changed.count == 1 && second.snapshot.changes.added.count == 300)
    }
}
