import Links
import Testing

/// The in-memory table of stored links: after any series of changes it holds exactly what a plain
/// dictionary given the same changes holds, shards untouched by a change are shared, not copied.
@Suite("Short link table: the loops' copy of the store")
struct ShortLinkTableTests {
    @Test("5,000 random creates, changes and deletes over 300 paths on 3 domains: the same links as a dictionary, in every state")
    func sameAsADictionary() {
        var generator = SystemRandomNumberGenerator()
        var table = ShortLinkTable.empty
        var model: [String: StoredLink] = [:]
        var revision: Int64 = 0
        for _ in 0..<250 {
            var batch: [StoredLink] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                revision += 1
                let domain = ["go.example.com", "links.example.com", "x.example.org"].randomElement(using: &generator)!
                let suffix = "s\(Int.random(in: 0..<100, using: &generator))"
                let state = StoredLink.State.allCases.randomElement(using: &generator)!
                let link = StoredLink(
                    domain: domain,
                    suffix: suffix,
                    parameters: ["link": "https://example.com/\(revision)"],
                    state: state,
                    revision: revision
                )
                batch.append(link)
                model[domain + "/" + suffix] = state == .deleted ? nil : link
            }
            table = table.applying(batch, revision: revision)
            #expect(table.revision == revision)
            #expect(table.count == model.count)
        }
        for domain in ["go.example.com", "links.example.com", "x.example.org"] {
            for index in 0..<100 {
                #expect(table.link(domain: domain, path: "/s\(index)") == model[domain + "/s\(index)"], "\(domain)/s\(index)")
            }
        }
        #expect(table.link(domain: "go.example.com", path: "/elsewhere") == nil)
    }

    @Test("No change, no new table; an empty batch at a later revision moves the revision only")
    func unchanged() {
        let table = ShortLinkTable.empty.applying(
            [StoredLink(domain: "go.example.com", suffix: "a", parameters: ["link": "https://e.com"], revision: 1)],
            revision: 1
        )
        #expect(table.applying([], revision: 1) === table)
        let later = table.applying([], revision: 7)
        #expect(later.revision == 7 && later.count == 1 && later.link(domain: "go.example.com", path: "/a") != nil)
    }

    @Test("Switching domains off makes a new table with the same links; the same set keeps the table; changes keep the set")
    func disabling() {
        let table = ShortLinkTable.empty.applying(
            [StoredLink(domain: "go.example.com", suffix: "a", parameters: ["link": "https://e.com"], revision: 1)],
            revision: 1
        )
        let off = table.disabling(["go.example.com"])
        #expect(off !== table && off.disabledDomains == ["go.example.com"] && off.link(domain: "go.example.com", path: "/a") != nil)
        #expect(off.disabling(["go.example.com"]) === off)
        let changed = off.applying(
            [StoredLink(domain: "go.example.com", suffix: "b", parameters: ["link": "https://e.com"], revision: 2)],
            revision: 2
        )
        #expect(changed.disabledDomains == ["go.example.com"] && changed.count == 2)
        #expect(changed.applying([], revision: 3).disabledDomains == ["go.example.com"])
        #expect(changed.disabling([]).disabledDomains.isEmpty)
    }

    @Test("Short links as written: with and without a scheme; none without a host or with more than one path segment")
    func locate() {
        #expect(StoredLink.locate("https://Go.Example.com/Abc")! == ("go.example.com", "Abc"))
        #expect(StoredLink.locate("go.example.com/abc")! == ("go.example.com", "abc"))
        #expect(StoredLink.locate("http://go.example.com/abc")! == ("go.example.com", "abc"))
        for bad in ["go.example.com", "go.example.com/", "/abc", "https://go.example.com/a/b", "go.example.com/a?x=1"] {
            #expect(StoredLink.locate(bad) == nil, "\(bad)")
        }
    }

    @Test("Parameters round-trip through the stored JSON with any text; a damaged value reads as nothing")
    func parameters() {
        let parameters = ["link": "https://example.com/?a=1&b=\"2\"", "st": "Ünïcode \u{1F600} \\ / \n", "sd": ""]
        #expect(StoredLink.decode(StoredLink.encode(parameters)) == parameters)
        #expect(StoredLink.decode("[1, 2]") == nil)
        #expect(StoredLink.decode("{\"link\": 3}") == nil)
        #expect(StoredLink.decode("{\"link\": ") == nil)
    }
}
