import Testing

@testable import AASA

/// The loaded sites in groups (the config's own, then one per included file), seen as one flat list.
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

    @Test("Positions run across groups in order, empty groups included; iteration, subscripts and locate agree")
    func flatPositions() {
        let groups = [
            SiteList.Group(Self.sites(["a", "b"])),
            SiteList.Group([], source: "empty.json"),
            SiteList.Group(Self.sites(["c"]), source: "one.json"),
            SiteList.Group([], source: "empty2.json"),
            SiteList.Group(Self.sites(["d", "fe", "f"]), source: "three.json"),
        ]
        let list = SiteList(groups: groups)
        #expect(list.count == 6)
        #expect(list.map(\.site.name) == ["a", "b", "c", "d", "fe", "f"])
        #expect(list.indices.map { list[$0].site.name } == ["a", "b", "c", "d", "fe", "f"])
        #expect(list.locate(0) == (0, 0))
        #expect(list.locate(2) == (2, 0))
        #expect(list.locate(3) == (4, 0))
        #expect(list.locate(5) == (4, 2))
        #expect(list.hostCount == 6)
        #expect(list.hostedFiles == ["/srv/fe.json", "/srv/f.json"])
        #expect(SiteList().isEmpty && SiteList(groups: [SiteList.Group([])]).isEmpty)
    }
    @Test("Host-table positions: groups keep their slots across lists, a replaced file takes its old slot, new ones the lowest free")
    func slots() {
        let a = SiteList.Group(Self.sites(["a1", "a2"]), source: "a.json")
        let b = SiteList.Group(Self.sites(["b1"]), source: "b.json")
        let c = SiteList.Group(Self.sites(["c1", "c2", "c3"]), source: "c.json")
        let first = SiteList(groups: [a, b, c])
        #expect(first.position(group: 2, offset: 1) == 2 << 32 | 1)
        #expect(first.site(atPosition: first.position(group: 2, offset: 1)).site.name == "c2")
        // A file before the others, b removed, c edited (a new object from the same file).
        let zero = SiteList.Group(Self.sites(["z1"]), source: "0.json")
        let editedC = SiteList.Group(Self.sites(["c1", "c2"]), source: "c.json")
        let second = SiteList(groups: [zero, a, editedC], keepingSlotsOf: first)
        #expect(second.position(group: 1, offset: 1) == first.position(group: 0, offset: 1))
        #expect(second.position(group: 2, offset: 0) == first.position(group: 2, offset: 0))
        #expect(second.position(group: 0, offset: 0) == 1 << 32, "the slot b left")
        for (group, offset, name) in [(0, 0, "z1"), (1, 0, "a1"), (1, 1, "a2"), (2, 0, "c1"), (2, 1, "c2")] {
            let position = second.position(group: group, offset: offset)
            #expect(second.locate(position: position) == (group, offset))
            #expect(second.site(atPosition: position).site.name == name)
        }
        let third = SiteList(groups: [zero, a, editedC, b], keepingSlotsOf: second)
        #expect(third.position(group: 3, offset: 0) == 3 << 32, "the lowest free slot")
    }
}
