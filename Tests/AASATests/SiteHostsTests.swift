import Testing

@testable import AASA

/// A site's hosts kept as one allocation of bytes: what goes in comes out, and the host table finds names
/// where the sites keep them.
@Suite("Site hosts")
struct SiteHostsTests {
    static let written: [(pattern: HostPattern, location: AASA.SourceLocation?)] = [
        (.exact("shop1.example.com"), AASA.SourceLocation(offset: 40, line: 3, column: 17)),
        (.wildcard("tenants.example.com"), AASA.SourceLocation(offset: 70, line: 3, column: 38)),
        (.exact("a.b"), nil),
        (.exact("www.shop1.example.com"), AASA.SourceLocation(offset: 4_000_000_000, line: 90_000, column: 12)),
    ]

    @Test("Patterns, locations and paths come back as written: hosts read from a site, one path for all, a path each")
    func roundTrip() {
        let site = JSONPath.root.key("sites").index(7)
        let read = SiteHosts(Self.written, hostsOf: site)
        #expect(read.count == 4)
        #expect(read.map(\.value) == Self.written.map(\.pattern))
        #expect(read.map(\.origin.location) == Self.written.map(\.location))
        #expect(read.map(\.origin.path.description) == (0..<4).map { "$.sites[7].hosts[\($0)]" })
        #expect(read.map(\.value.description) == ["shop1.example.com", "*.tenants.example.com", "a.b", "www.shop1.example.com"])
        #expect(read.arePaths(hostsOf: site) && !read.arePaths(hostsOf: JSONPath.root.key("sites").index(8)))
        #expect((0..<4).map(read.isWildcard) == [false, true, false, false])

        let each = [
            Located(HostPattern.exact("one.example"), Provenance(nil, JSONPath.root.key("a"))),
            Located(
                HostPattern.exact("two.example"),
                Provenance(AASA.SourceLocation(offset: 1, line: 1, column: 2), JSONPath.root.key("b"))
            ),
        ]
        let own = SiteHosts(each)
        #expect(own.map(\.origin.path.description) == ["$.a", "$.b"])
        #expect(own.map(\.origin.location) == each.map(\.origin.location))
        #expect(!own.arePaths(hostsOf: .root))

        let shared = read.sharingPath(site)
        #expect(shared.map(\.origin.path.description) == Array(repeating: "$.sites[7]", count: 4))
        #expect(shared.map(\.origin.location) == Self.written.map(\.location))
        #expect(shared.hasSamePatterns(as: read))

        #expect(SiteHosts.empty.isEmpty && SiteHosts([]).isEmpty)
        let literal: SiteHosts = [Located(.exact("x.example"))]
        #expect(literal.map(\.value) == [.exact("x.example")] && literal[0].origin.path == .root && literal[0].origin.location == nil)
    }

    @Test("Same patterns means same kinds and names in the same order; where they were written does not count")
    func samePatterns() {
        let one = SiteHosts(Self.written, hostsOf: .root)
        let moved = SiteHosts(Self.written.map { ($0.pattern, nil) }, hostsOf: JSONPath.root.index(3))
        #expect(one.hasSamePatterns(as: moved) && one.hasSamePatterns(as: one))
        let exactInsteadOfWildcard = SiteHosts(patterns: Self.written.map { .exact($0.pattern.name) })
        #expect(!one.hasSamePatterns(as: exactInsteadOfWildcard))
        #expect(!one.hasSamePatterns(as: SiteHosts(patterns: Self.written.dropLast().map(\.pattern))))
        #expect(!one.hasSamePatterns(as: SiteHosts(patterns: Self.written.reversed().map(\.pattern))))
        // One byte apart, in the last name.
        let renamed = SiteHosts(patterns: Self.written.dropLast().map(\.pattern) + [.exact("www.shop1.example.con")])
        #expect(!one.hasSamePatterns(as: renamed))
    }

    @Test("The host table keeps a site's exact names where the site keeps them, and finds them by their bytes")
    func tableReferencesSiteNames() {
        let hosts = SiteHosts(Self.written, hostsOf: .root)
        var table = HostTable<Int>()
        for index in hosts.indices { #expect(table.insertIfAbsent(hosts, index, 5) == nil) }
        #expect(table.insertIfAbsent(.exact("a.b"), 6) == 5, "the first claim stays")
        #expect(table.lookup(normalized: "shop1.example.com") == 5)
        #expect(table.lookup("WWW.Shop1.Example.com.:443") == 5)
        #expect(table.lookup(normalized: "x.tenants.example.com") == 5)
        #expect(table.lookup(normalized: "shop1.example.co") == nil)
        #expect(table.lookup(normalized: "shop1.example.comm") == nil)
        // The label is the name asked for: equal to the config's, whichever string holds it.
        #expect(table.match(normalized: "shop1.example.com").map(\.entry) == "shop1.example.com")
        #expect(table.match(normalized: "deep.x.tenants.example.com").map(\.entry) == "*.tenants.example.com")
        // A Host header as received: any case, a port, a trailing dot; the label and the name asked for.
        func header(_ text: String) -> [String]? {
            Array(text.utf8).withUnsafeBufferPointer { bytes in
                table.match(hostHeader: bytes).map { [String($0.value), $0.entry, $0.name] }
            }
        }
        #expect(header("Shop1.EXAMPLE.com.:8443") == ["5", "shop1.example.com", "shop1.example.com"])
        #expect(header("Deep.X.tenants.example.com") == ["5", "*.tenants.example.com", "deep.x.tenants.example.com"])
        #expect(header("shop2.example.com") == nil && header("") == nil && header(":80") == nil)
        table.remove(.exact("shop1.example.com"), ifAt: 5)
        #expect(table.lookup(normalized: "shop1.example.com") == nil && table.lookup(normalized: "a.b") == 5)
    }

    @Test("Names compare as the table compares them: every length up to 40 bytes, a difference at every position")
    func byteComparison() {
        for length in 0...40 {
            let name = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            name.withUnsafeBytes { left in
                #expect(ByteComparison.equal(left, left))
                #expect(!ByteComparison.equal(left, UnsafeRawBufferPointer(rebasing: left.dropLast())) || length == 0)
                for position in 0..<length {
                    var other = name
                    other[position] ^= 0x20
                    other.withUnsafeBytes { right in #expect(!ByteComparison.equal(left, right)) }
                }
            }
        }
    }
}
