import AASA
import ConsolePages
import Foundation
import HTTP1
import Synchronization
import TestSupport
import Testing

@testable import Server

/// The console's host listing and search over every layout a config can have: each listed host must be
/// found at a position whose site really has that host, and every host page must open. A listing that
/// counted sites instead of taking their host-table positions stopped the server on the first included
/// file (issue 29, item 0).
@Suite("Console listing over every config layout")
struct ConsoleListingTests {
    enum Layout: String, CaseIterable, CustomStringConvertible {
        /// All sites in the config itself.
        case ownSites
        /// One site per included file (the layout README recommends for tenants).
        case onePerFile
        /// Many sites per included file, with a few sites in the config too.
        case manyPerFile
        /// Exact and wildcard hosts mixed, across files.
        case wildcards
        /// Android-only sites (no AASA) between Apple ones.
        case androidOnly

        var description: String { rawValue }
    }

    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    /// The config and its included files for `hosts` hosts (two hosts a site where that fits).
    static func files(_ layout: Layout, hosts: Int) -> [String: String] {
        func apple(_ names: [String]) -> String {
            #"{"hosts": [\#(names.map { "\"\($0)\"" }.joined(separator: ","))], "webcredentials": {"apps": ["shop"]}}"#
        }
        func android(_ names: [String]) -> String {
            #"{"hosts": [\#(names.map { "\"\($0)\"" }.joined(separator: ","))], "android": ["shop"]}"#
        }
        var sites: [(String, Int)] = []  // (site JSON, index of the site)
        var index = 0
        var remaining = hosts
        while remaining > 0 {
            let count = min(remaining, 2)
            var names = (0..<count).map { $0 == 0 ? "go.c\(index).example.com" : "www.c\(index).example.com" }
            switch layout {
            case .wildcards where index % 3 == 1: names[0] = "*.w\(index).example.com"
            default: break
            }
            let json = layout == .androidOnly && index % 2 == 1 ? android(names) : apple(names)
            sites.append((json, index))
            index += 1
            remaining -= count
        }
        let apps =
            #""apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]}}}"#
        var files: [String: String] = [:]
        var own: [String] = []
        switch layout {
        case .ownSites:
            own = sites.map(\.0)
        case .onePerFile, .androidOnly:
            for (json, index) in sites { files["/etc/aasa/sites.d/\(String(index + 100_000_000))"] = json }
        case .manyPerFile, .wildcards:
            // The first two sites in the config, the rest in files of up to 7 (a prime, so groups differ in size).
            own = Array(sites.prefix(2).map(\.0))
            for start in stride(from: 2, to: sites.count, by: 7) {
                let chunk = sites[start..<min(sites.count, start + 7)].map(\.0)
                files["/etc/aasa/sites.d/\(String(start + 100_000_000))"] = "[" + chunk.joined(separator: ",") + "]"
            }
        }
        let renamed = Dictionary(uniqueKeysWithValues: files.map { ($0.key + ".json", $0.value) })
        let include = layout == .ownSites ? "" : #", "include": ["sites.d/*.json"]"#
        var all = renamed
        all["/etc/aasa/config.json"] = #"{"version": 1, \#(apps), "sites": [\#(own.joined(separator: ","))]\#(include)}"#
        return all
    }

    static func snapshot(_ layout: Layout, hosts: Int) -> Snapshot {
        let files = Self.files(layout, hosts: hosts)
        let loaded = ConfigLoader.load(
            configBytes: Array(files["/etc/aasa/config.json"]!.utf8),
            configPath: "/etc/aasa/config.json",
            readFile: { path in
                guard let text = files[path] else { return .failure(FileReadError("no such file")) }
                return .success(Array(text.utf8))
            },
            includes: IncludeAccess(
                list: { directory in
                    files.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }
                },
                stamp: { path in files[path].map { "\($0.count)" } }
            )
        )
        precondition(!loaded.hasErrors, "\(loaded.diagnostics.prefix(3))")
        return Snapshot(config: loaded, settings: loaded.config!.server, generation: 1, now: 1_764_500_000)
    }

    /// Every host the listing shows for `query`, page by page, checked against the site at its position.
    func listAll(_ snapshot: Snapshot, query: String, log: FetchLog) throws -> [String] {
        var listed: [String] = []
        var page = 1
        while true {
            let listing = try ConsoleRenderer.hostListing(query: query, page: page, log: log, snapshot: snapshot, now: 0)
            listed += listing.rows.map(\.host)
            guard listing.hasMore else { break }
            page += 1
        }
        return listed
    }

    @Test("every page and every search lists hosts whose pages open, in config order", arguments: Layout.allCases, [1, 2, 7, 61, 1_000])
    func everyLayout(layout: Layout, hosts: Int) throws {
        let snapshot = Self.snapshot(layout, hosts: hosts)
        let log = FetchLog(settings: ServerSettings(), snapshot: snapshot, configPath: "/etc/aasa/config.json")
        let expected = snapshot.layout.flatMap { $0.site.hosts.map(\.value.description) }
        #expect(expected.count == hosts)
        #expect(try listAll(snapshot, query: "", log: log) == expected)
        // Every host by a search that finds it, and its own page.
        for host in expected.prefix(200) {
            let search = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
            #expect(try listAll(snapshot, query: search, log: log).contains(host), "\(host) not found by searching \(search)")
            let answer = try ConsoleRenderer.answer(path: "/console/host/\(host)", query: "", log: log, snapshot: snapshot, now: 0)
            #expect(answer?.status == 200, "\(host)")
        }
        // Each listed host's position is the site that has the host.
        for (position, loaded) in snapshot.layout.positioned {
            for pattern in loaded.site.hosts {
                #expect(snapshot.hosts.lookup(pattern.value.description.replacingOccurrences(of: "*.", with: "x.")) == position)
            }
        }
    }

    @Test("100,000 hosts, one site per included file: the search that used to stop the server, and the last page")
    func largeOnePerFile() throws {
        let snapshot = Self.snapshot(.onePerFile, hosts: 100_000)
        let log = FetchLog(settings: ServerSettings(), snapshot: snapshot, configPath: "/etc/aasa/config.json")
        let found = try ConsoleRenderer.hostListing(query: "go.c4999", page: 1, log: log, snapshot: snapshot, now: 0)
        #expect(found.rows.map(\.host).first == "go.c4999.example.com")
        #expect(found.rows.allSatisfy { $0.host.contains("go.c4999") })
        let lastPage = (100_000 + HostIndexPage.pageSize - 1) / HostIndexPage.pageSize
        let last = try ConsoleRenderer.hostListing(query: "", page: lastPage, log: log, snapshot: snapshot, now: 0)
        #expect(last.rows.last?.host == "www.c49999.example.com")
        #expect(!last.hasMore)
        let beyond = try ConsoleRenderer.hostListing(query: "", page: lastPage + 1, log: log, snapshot: snapshot, now: 0)
        #expect(beyond.rows.isEmpty)
    }

    @Test("a position no site has is a 500 for that request, not a stopped server")
    func wrongPositionAnswers500() throws {
        let snapshot = Self.snapshot(.onePerFile, hosts: 4)
        #expect(snapshot.siteIfPresent(at: 0) != nil)
        #expect(snapshot.siteIfPresent(at: 1) == nil, "offset 1 of a one-site group")
        #expect(snapshot.siteIfPresent(at: 99 << 32) == nil, "no such slot")
        #expect(snapshot.siteIfPresent(at: -1) == nil)
        var harness = RouterHarness()
        harness.view.console = { _, _ throws(ConsoleRenderer.Failure) in throw ConsoleRenderer.Failure(reason: "no site at position 7") }
        guard case .respond(let response, _, _) = harness.route("GET /console HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin) else {
            Issue.record("not answered")
            return
        }
        #expect(response.status == 500)
        #expect(String(decoding: response.body, as: UTF8.self).contains("no site at position 7"))
    }
}
