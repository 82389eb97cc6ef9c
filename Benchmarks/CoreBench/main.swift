// Release-mode timings of the pure core (issue: config load < 1 s for 10,000 hosts; match ≥ 1,000,000 URL checks/s).
// Run with Benchmarks/core.sh. Not a test: the numbers depend on the machine.
import AASA
import Glibc

let clock = ContinuousClock()

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

// 10,000 hosts: 5,000 sites, each with an apex and a www host, three components, legacy + modern, webcredentials.
func bigConfig(sites: Int) -> [UInt8] {
    var text = #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": ["#
    for index in 0..<sites {
        if index > 0 { text += "," }
        text += #"""
            {"hosts": ["shop\#(index).example.com", "www.shop\#(index).example.com"],
             "applinks": {"formats": ["modern", "legacy"], "details": [{"apps": ["shop", "ABCDE12345.com.example.app\#(index)"],
               "components": [{"/": "/admin/*", "exclude": true}, {"/": "/product/\#(index)/*"}, {"/": "/cart", "?": {"id": "?*"}}]}]},
             "webcredentials": {"apps": ["shop"]}}
            """#
    }
    text += "]}"
    return Array(text.utf8)
}

// `CoreBench include`: start-up work per tenant site, one thread — what a million-host start-up
// spends on each of its 500,000 sites (the same site shape as Benchmarks/scale.py writes).
if CommandLine.arguments.dropFirst().first == "include" {
    let files = getenv("COREBENCH_FILES").flatMap { Int(String(cString: $0)) } ?? 100
    let perFile = 500
    var written: [String: [UInt8]] = [:]
    for file in 0..<files {
        var text = "["
        for index in file * perFile..<(file + 1) * perFile {
            if index > file * perFile { text += "," }
            text += #"{"hosts":["shop\#(index).example.com","www.shop\#(index).example.com"],"#
            text += #""applinks":{"details":[{"apps":["shop"],"components":[{"/":"/admin/*","exclude":true},"#
            text += #"{"/":"/product/\#(index)/*"},{"/":"/cart","?":{"id":"?*"}}]}]},"webcredentials":{"apps":["shop"]}}"#
        }
        written["/bench/sites.d/t\(file).json"] = Array((text + "]").utf8)
    }
    let contents = written
    let names = contents.keys.map { String($0.dropFirst("/bench/sites.d/".count)) }
    let access = IncludeAccess(list: { _ in names }, stamp: { contents[$0].map { "\($0.count)" } })
    let base = Array(#"{"version":1,"apps":{"shop":"ABCDE12345.com.example.shop"},"sites":[],"include":["sites.d/*.json"]}"#.utf8)
    var times: [Double] = []
    for _ in 0..<5 {
        let elapsed = clock.measure {
            let loaded = ConfigLoader.load(
                configBytes: base,
                configPath: "/bench/config.json",
                readFile: { path in contents[path].map { .success($0) } ?? .failure(FileReadError("none")) },
                servingOnly: true,
                includes: access
            )
            precondition(!loaded.hasErrors && loaded.sites.count == files * perFile, "\(loaded.diagnostics.prefix(3))")
        }
        times.append(seconds(elapsed))
    }
    let perSite = median(times) / Double(files * perFile) * 1e6
    print("include: \(files * perFile) sites in \(files) files, one thread, median of 5: \(String(perSite).prefix(5)) µs per site")
    exit(0)
}

// `CoreBench match` skips the config part, `CoreBench load` the matching (for profiling one alone).
let onlyMatch = CommandLine.arguments.dropFirst().first == "match"
// COREBENCH_SITES shrinks the config, for counting instructions under valgrind (callgrind).
let siteCount = getenv("COREBENCH_SITES").flatMap { Int(String(cString: $0)) } ?? 5_000
let config = bigConfig(sites: onlyMatch ? 1 : siteCount)
var loadTimes: [Double] = []
var hostCount = 0
for _ in 0..<(onlyMatch ? 0 : 5) {
    var loaded: LoadedConfig?
    let elapsed = clock.measure {
        loaded = ConfigLoader.load(configBytes: config, configPath: "bench.json") { _ in .failure(FileReadError("none")) }
    }
    precondition(loaded?.hasErrors == false, "benchmark config must be valid: \(loaded?.diagnostics.prefix(3) ?? [])")
    hostCount = loaded?.sites.reduce(0) { $0 + $1.site.hosts.count } ?? 0
    precondition(loaded?.site(forHost: "www.shop\(siteCount - 1).example.com") != nil)
    loadTimes.append(seconds(elapsed))
}
if !onlyMatch {
    print(
        "config: \(config.count / 1024) KiB, \(hostCount) hosts — parse + validate + generate, median of 5: "
            + "\(Int(median(loadTimes) * 1000)) ms (target < 1000 ms)"
    )
}

// A reload after one site was edited: everything else is taken over from the previous load.
if !onlyMatch {
    let previous = ConfigLoader.load(configBytes: config, configPath: "bench.json") { _ in .failure(FileReadError("none")) }
    let text = String(decoding: config, as: UTF8.self)
    var editTimes: [Double] = []
    for revision in 0..<5 {
        let edited = Array(
            text.replacingOccurrencesOfFirst("/product/\(revision * 97 % siteCount)/*", with: "/product/\(revision * 97 % siteCount)/v2/*")
                .utf8
        )
        var loaded: LoadedConfig?
        editTimes.append(
            seconds(
                clock.measure {
                    loaded = ConfigLoader.load(
                        configBytes: edited,
                        configPath: "bench.json",
                        readFile: { _ in .failure(FileReadError("none")) },
                        reusing: previous
                    )
                }
            )
        )
        precondition(loaded?.hasErrors == false && loaded?.sites.count == previous.sites.count)
    }
    print("reload with one site edited (the rest taken over), median of 5: \(String(median(editTimes) * 1000).prefix(5)) ms")
}
if CommandLine.arguments.dropFirst().first == "load" { exit(0) }

// A typical modern file: Apple's documented pattern set plus substitution variables and a query rule.
let typical = Array(
    #"""
    {"applinks": {"substitutionVariables": {"food": ["burrito", "pizza", "sushi", "samosa"]},
     "details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [
       {"#": "no_universal_links", "exclude": true},
       {"/": "/admin/*", "exclude": true},
       {"/": "/buy/*"},
       {"/": "/help/website/*", "exclude": true},
       {"/": "/help/*", "?": {"articleNumber": "????"}},
       {"/": "/$(lang)_$(region)/$(food)/"},
       {"/": "/product/?*", "caseSensitive": false}]}]}}
    """#.utf8
)
guard let document = AASADecoder.decode(typical).document else { fatalError("benchmark document must parse") }
let matcher = Matcher(document)
let urls = [
    "https://example.com/buy/shoes", "https://example.com/admin/users", "https://example.com/help/faq?articleNumber=1234",
    "https://example.com/en_US/sushi/", "https://example.com/Product/42", "https://example.com/about",
    "https://example.com/buy/x#no_universal_links", "https://example.com/help/website/a",
]
let parsedURLs = urls.map(MatchURL.init)
/// Median URL checks per second over 5 runs of `rounds` matches.
func matchRate(_ check: (Int) -> Bool) -> Double {
    let rounds = 200_000
    var rates: [Double] = []
    for _ in 0..<5 {
        var opened = 0
        let elapsed = clock.measure {
            for round in 0..<rounds where check(round) { opened += 1 }
        }
        precondition(opened > 0)
        rates.append(Double(rounds) / seconds(elapsed))
    }
    return median(rates)
}
let preSplitRate = matchRate { matcher.match(parsedURLs[$0 & 7], explainingMisses: false).app != nil }
let stringRate = matchRate { matcher.match(urls[$0 & 7], explainingMisses: false).app != nil }
print(
    "match: \(Int(preSplitRate)) URL checks/s with pre-split URLs, \(Int(stringRate)) from URL strings "
        + "(7 components, 8 URLs, median of 5; target ≥ 1,000,000)"
)

extension String {
    func replacingOccurrencesOfFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { fatalError("benchmark text must contain \(target)") }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}
