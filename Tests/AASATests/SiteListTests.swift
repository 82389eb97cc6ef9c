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
    @Test("Host-table positions: chunks keep their slots across lists, a replaced file takes its old slot, new ones the lowest free")
    func slots() {
        let a = SiteList.Chunk(Self.sites(["a1", "a2"]), source: "a.json")
        let b = SiteList.Chunk(Self.sites(["b1"]), source: "b.json")
        let c = SiteList.Chunk(Self.sites(["c1", "c2", "c3"]), source: "c.json")
        let first = SiteList(chunks: [a, b, c])
        #expect(first.position(chunk: 2, offset: 1) == 2 << 32 | 1)
        #expect(first.site(atPosition: first.position(chunk: 2, offset: 1)).site.name == "c2")
        // A file before the others, b removed, c edited (a new object from the same file).
        let zero = SiteList.Chunk(Self.sites(["z1"]), source: "0.json")
        let editedC = SiteList.Chunk(Self.sites(["c1", "c2"]), source: "c.json")
        let second = SiteList(chunks: [zero, a, editedC], keepingSlotsOf: first)
        #expect(second.position(chunk: 1, offset: 1) == first.position(chunk: 0, offset: 1))
        #expect(second.position(chunk: 2, offset: 0) == first.position(chunk: 2, offset: 0))
        #expect(second.position(chunk: 0, offset: 0) == 1 << 32, "the slot b left")
        for (chunk, offset, name) in [(0, 0, "z1"), (1, 0, "a1"), (1, 1, "a2"), (2, 0, "c1"), (2, 1, "c2")] {
            let position = second.position(chunk: chunk, offset: offset)
            #expect(second.locate(position: position) == (chunk, offset))
            #expect(second.site(atPosition: position).site.name == name)
        }
        let third = SiteList(chunks: [zero, a, editedC, b], keepingSlotsOf: second)
        #expect(third.position(chunk: 3, offset: 0) == 3 << 32, "the lowest free slot")
    }
}
