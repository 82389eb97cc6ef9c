import Dispatch
import Testing

@testable import AASA

/// The exact-host index behind the host table, and the parallel build of a large config's table.
@Suite("Host index")
struct HostIndexTests {
    @Test("match names the config entry that matched: the exact host, or the wildcard pattern, with few or many wildcards")
    func matchNamesTheEntry() throws {
        for extra in [0, 20] {
            var table = HostTable<Int>()
            table.insert(try HostPattern.parse("example.com").get(), 0)
            table.insert(try HostPattern.parse("www.example.com").get(), 0)
            table.insert(try HostPattern.parse("*.cust.example").get(), 1)
            for index in 0..<extra { table.insert(try HostPattern.parse("*.w\(index).example").get(), 2) }
            #expect(table.match(normalized: "www.example.com").map { [String($0.value), $0.entry] } == ["0", "www.example.com"])
            #expect(table.match(normalized: "example.com").map { [String($0.value), $0.entry] } == ["0", "example.com"])
            #expect(table.match(normalized: "a.b.cust.example").map { [String($0.value), $0.entry] } == ["1", "*.cust.example"])
            #expect(table.match(normalized: "cust.example") == nil)
            #expect(table.wildcard(serving: "x.cust.example") == "*.cust.example")
        }
    }

    @Test("Insert, look up, keep the first value, replace with set, and grow far past the first size")
    func insertAndGrow() {
        var index = ExactHostIndex<Int>()
        #expect(index.insertIfAbsent(HostName("a.example.com"), 1) == nil)
        #expect(index.insertIfAbsent(HostName("a.example.com"), 2) == 1)
        #expect(index.lookup("a.example.com") == 1)
        index.set(HostName("a.example.com"), 3)
        #expect(index.lookup("a.example.com") == 3)
        #expect(index.lookup("b.example.com") == nil)
        #expect(index.lookup("") == nil)
        // Thousands of names in a table sized for none: every one found after the slots were rebuilt.
        for number in 0..<5_000 { #expect(index.insertIfAbsent(HostName("host\(number).example.com"), number) == nil) }
        #expect(index.count == 5_001)
        let allFound = (0..<5_000).allSatisfy { (number: Int) in index.lookup("host\(number).example.com") == number }
        #expect(allFound)
        #expect(index.lookup("host5000.example.com") == nil)
        #expect(index.lookup("a.example.com") == 3)
    }

    @Test("Removing names keeps every other name reachable, however the probe runs wrap; entries stay dense")
    func removal() {
        var index = ExactHostIndex<Int>()
        // Enough names in a small table that probe runs are long and wrap around its end.
        for number in 0..<3_000 { _ = index.insertIfAbsent(HostName("r\(number).example.org"), number) }
        #expect(index.remove("r7.example.org") { $0 == 8 } == false, "only when it maps to the given value")
        var removed = Set<Int>()
        for number in stride(from: 0, to: 3_000, by: 3) {
            #expect(index.remove("r\(number).example.org") { $0 == number })
            removed.insert(number)
        }
        #expect(index.remove("r0.example.org") { _ in true } == false)
        #expect(index.count == 2_000)
        let consistent = (0..<3_000).allSatisfy { (number: Int) in
            index.lookup("r\(number).example.org") == (removed.contains(number) ? nil : number)
        }
        #expect(consistent)
        // Names come back, and the table grows again without losing any.
        for number in removed { #expect(index.insertIfAbsent(HostName("r\(number).example.org"), -number) == nil) }
        #expect(index.lookup("r3.example.org") == -3 && index.lookup("r4.example.org") == 4 && index.count == 3_000)
    }

    @Test("A large table is in 64 shards; names land in the shard their hash says, and are all found")
    func shards() {
        var index = ExactHostIndex<Int>(expectedCount: 70_000)
        #expect(index.shards.count == 64)
        for number in 0..<70_000 { _ = index.insertIfAbsent(HostName("t\(number).example.net"), number) }
        #expect(index.shards.allSatisfy { $0.count > 0 })
        #expect(index.shards.reduce(0) { $0 + $1.count } == 70_000)
        let allFound = (0..<70_000).allSatisfy { (number: Int) in index.lookup("t\(number).example.net") == number }
        #expect(allFound)
        #expect(ExactHostIndex<Int>(expectedCount: 1_000).shards.count == 1)
    }

    static let threads: ParallelFor = { count, body in DispatchQueue.concurrentPerform(iterations: count) { body($0) } }

    /// 35,000 sites in 70 files, two hosts each, plus wildcards and hosts claimed twice.
    static func largeList() -> SiteList {
        var groups: [SiteList.Group] = []
        for file in 0..<70 {
            var sites: [LoadedSite] = []
            for number in file * 500..<(file + 1) * 500 {
                var hosts: [HostPattern] = [.exact("shop\(number).example.com"), .exact("www.shop\(number).example.com")]
                if number % 1_000 == 7 { hosts.append(.wildcard("tenant\(number / 1_000).example.com")) }
                // Later sites claim hosts earlier ones have: an exact name, and a wildcard.
                if number % 5_000 == 4_999 { hosts.append(.exact("shop\(number - 4_000).example.com")) }
                if number == 34_999 { hosts.append(.wildcard("tenant0.example.com")) }
                let path = JSONPath.rootIndex(number % 500)
                sites.append(
                    LoadedSite(
                        site: Site(
                            hosts: hosts.enumerated().map { Located($1, Provenance(SourceLocation(offset: $0, line: 1, column: 1), path)) },
                            source: .none,
                            origin: Provenance(SourceLocation(offset: 0, line: 1, column: 1), path)
                        ),
                        document: nil,
                        bytes: [],
                        file: nil,
                        verbatimRoot: nil,
                        definedIn: "sites.d/\(file).json"
                    )
                )
            }
            groups.append(SiteList.Group(sites, source: "sites.d/\(file).json"))
        }
        return SiteList(groups: groups)
    }

    @Test("Built in parallel, a 70,000-host table answers every host as the one-by-one build does, with the same duplicate errors")
    func parallelBuildMatchesSequential() {
        let sites = Self.largeList()
        #expect(sites.hostCount >= HostTableBuilder.parallelThreshold)
        let parallel = HostTableBuilder.build(sites, configPath: "config.json", parallel: Self.threads)
        let sequential = HostTableBuilder.sequential(sites, configPath: "config.json")
        for site in sites {
            for host in site.site.hosts {
                let name = host.value.isWildcard ? "x." + host.value.description.dropFirst(2) : host.value.description
                #expect(parallel.table.lookup(name) == sequential.table.lookup(name), "\(name)")
            }
        }
        #expect(parallel.table.lookup("shop1000.example.com").map { sites.site(atPosition: $0).site.name } == "shop1000.example.com")
        #expect(parallel.table.lookup("any.tenant0.example.com").map { sites.site(atPosition: $0).site.name } == "shop7.example.com")
        #expect(parallel.table.lookup("unknown.example.com") == nil)
        let described = { (found: [Diagnostic]) in found.map { "\($0.file ?? "") \($0.path ?? "") \($0.message)" } }
        #expect(parallel.duplicates.count == 8)
        #expect(described(parallel.duplicates) == described(sequential.duplicates))
        #expect(parallel.duplicates.first?.message.contains("shop999.example.com") == true)
        #expect(parallel.duplicates.first?.file == "sites.d/9.json")
    }
}
