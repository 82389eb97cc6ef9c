import Testing

@testable import AASA

/// The loaded sites in chunks (the config's own, then one per included file), seen as one flat list.
@Suite("Site list")
struct SiteListTests {
    static func sites(_ hosts: [String]) -> [LoadedSite] {
        hosts.map { host in
            LoadedSite(
                site: Site(hosts: [Located(.exact(host), .none)], source: .none),
                document: nil,
                bytes: Array(host.utf8),
                file: host.hasPrefix("f") ? "/srv/\(host).json" : nil,
                verbatimRoot: nil
            )
        }
    }

    @Test("Positions run across chunks in order, empty chunks included; iteration, subscripts and locate agree")
    func flatPositions() {
        let chunks = [
            SiteList.Chunk(Self.sites(["a", "b"])),
            SiteList.Chunk([], source: "empty.json"),
            SiteList.Chunk(Self.sites(["c"]), source: "one.json"),
            SiteList.Chunk([], source: "empty2.json"),
            SiteList.Chunk(Self.sites(["d", "fe", "f"]), source: "three.json"),
        ]
        let list = SiteList(chunks: chunks)
        #expect(list.count == 6)
        #expect(list.map(\.site.name) == ["a", "b", "c", "d", "fe", "f"])
        #expect(list.indices.map { list[$0].site.name } == ["a", "b", "c", "d", "fe", "f"])
        #expect(list.locate(0) == (0, 0))
        #expect(list.locate(2) == (2, 0))
        #expect(list.locate(3) == (4, 0))
        #expect(list.locate(5) == (4, 2))
        #expect(list.hostCount == 6)
        #expect(list.hostedFiles == ["/srv/fe.json", "/srv/f.json"])
        #expect(SiteList().isEmpty && SiteList(chunks: [SiteList.Chunk([])]).isEmpty)
    }
}
