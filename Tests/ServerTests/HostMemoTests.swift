import AASA
import TestSupport
import Testing

@testable import Server

@Suite("The Host a loop matched last")
struct HostMemoTests {
    static func snapshot(_ config: String, generation: Int) -> Snapshot {
        let loaded = ConfigLoader.load(
            configBytes: Array(config.utf8),
            configPath: "/config.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        precondition(!loaded.hasErrors, "\(loaded.diagnostics)")
        return Snapshot(config: loaded, settings: loaded.config!.server, generation: generation, now: 1_764_500_000)
    }

    static func describe(_ match: HostMatch?) -> String {
        match.map { "\($0.value) \($0.entry) \($0.name)" } ?? "none"
    }

    static func memoMatch(_ memo: HostMemo, _ header: String, _ snapshot: Snapshot) -> String {
        describe(Array(header.utf8).withUnsafeBufferPointer { memo.match($0, in: snapshot) })
    }

    static func tableMatch(_ header: String, _ snapshot: Snapshot) -> String {
        describe(Array(header.utf8).withUnsafeBufferPointer { snapshot.hosts.match(hostHeader: $0) })
    }

    static let headers = [
        "example.com", "example.com", "EXAMPLE.com:8443", "www.example.com.", "shop.tenant.example.com", "unknown.test",
        "unknown.test", "[::1]:80", "example.com", String(repeating: "a", count: 60) + ".com", String(repeating: "b", count: 70) + ".com",
        String(repeating: "b", count: 70) + ".com",
    ]

    @Test("Every Host, asked again or not, gets what the table gives; the same bytes again are answered from memory")
    func sameAsTheTable() {
        let snapshot = Self.snapshot(testConfig(), generation: 7)
        let memo = HostMemo()
        for (position, header) in Self.headers.enumerated() {
            #expect(Self.memoMatch(memo, header, snapshot) == Self.tableMatch(header, snapshot), "\(position): \(header)")
        }
        // The second example.com, the second unknown.test; not the 74-byte name asked twice (too long to keep).
        #expect(memo.hits == 2)
        #expect(Self.tableMatch("EXAMPLE.com:8443", snapshot) == "0 example.com example.com")
        #expect(Self.tableMatch("unknown.test", snapshot) == "none")
    }

    @Test("A new generation is matched against its own table, whatever the last one remembered")
    func newGeneration() {
        let first = Self.snapshot(testConfig(), generation: 7)
        let extra = #", {"hosts": ["unknown.test"], "webcredentials": {"apps": ["shop"]}}"#
        // The same host at another position, and a host that was unknown before.
        let second = Self.snapshot(testConfig(extraSites: extra), generation: 8)
        let memo = HostMemo()
        #expect(Self.memoMatch(memo, "unknown.test", first) == "none")
        #expect(Self.memoMatch(memo, "unknown.test", second) == "2 unknown.test unknown.test")
        #expect(Self.memoMatch(memo, "unknown.test", second) == "2 unknown.test unknown.test")
        // Back to the old generation (a batch that began before a reload): its own answer again.
        #expect(Self.memoMatch(memo, "unknown.test", first) == "none")
        #expect(memo.hits == 1)
    }

    @Test("The match is read where the memo keeps it: one object while the same Host comes, another for another Host")
    func foundInPlace() {
        let snapshot = Self.snapshot(testConfig(), generation: 7)
        let memo = HostMemo()
        func found(_ header: String) -> Unmanaged<HostMemo.Found>? {
            Array(header.utf8).withUnsafeBufferPointer { memo.found($0, in: snapshot) }
        }
        func read(_ found: Unmanaged<HostMemo.Found>?) -> String {
            Self.describe(found?._withUnsafeGuaranteedRef { $0.match })
        }
        let first = found("example.com")
        let again = found("EXAMPLE.com")
        #expect(read(first) == "0 example.com example.com" && memo.hits == 0, "other bytes, matched again")
        let same = found("EXAMPLE.com")
        #expect(same?.toOpaque() == again?.toOpaque() && memo.hits == 1, "the same bytes: the same match, not a copy")
        let long = String(repeating: "b", count: 70) + ".com"
        #expect(read(found(long)) == Self.tableMatch(long, snapshot))
        // The long name is not kept, and what was kept before it is forgotten: asked again, matched again.
        #expect(read(found("EXAMPLE.com")) == "0 example.com example.com" && memo.hits == 1)
        #expect(read(found("unknown.test")) == "none" && found("unknown.test") == nil && memo.hits == 2)
    }
}
