import AASA
import Links

/// The readers of short links that arrive from outside: FDL's shortLinks request body, Google's Takeout
/// CSV, the API's own body, `links import`'s JSON lines and claim codes (the input's first byte picks one).
/// No crash; whatever the input, a rule made of it sends a visitor only to the allowlist (or the site's own
/// app's stores), every CSV row and imported record names a line of the input, and a claim code that reads
/// back is the one spelling of itself.
let links = SiteLinks(
    app: LinkApp(name: "shop", appleID: "ABCDE12345.com.example.shop", appStoreID: "123", androidPackage: "com.example.shop"),
    openHost: nil,
    rules: [],
    firebaseLongLinks: true,
    allow: DestinationAllowlist(entries: [.host("example.com"), .prefix(scheme: "https", host: "shop.example.com", path: "/app/")]),
    origin: .none
)
let allowedHosts: Set<String> = ["example.com", "shop.example.com"]
let config = ConfigLoader.load(
    configBytes: Array(
        #"""
        {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
         "sites": [{"hosts": ["go.example.com"], "links": {"app": "shop", "allow": ["example.com"], "rules": []}}]}
        """#.utf8
    ),
    configPath: "/fuzz.json",
    readFile: { _ in .failure(FileReadError("none")) }
)
let claimKey = (0..<32).map { UInt8($0) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: count - 1))
    var parameterSets: [[String: String]] = []
    let lines = bytes.count { $0 == 0x0A } + 1
    switch data[0] % 5 {
    case 0:
        if case .success(let request) = FirebaseShortLinkRequest.decode(bytes) { parameterSets.append(request.parameters) }
    case 1:
        if case .success(let read) = TakeoutCSV.read(bytes) {
            for row in read.rows {
                precondition(row.line >= 1 && row.line <= lines, "row line \(row.line) outside the input's \(lines) lines")
                parameterSets.append(row.parameters)
            }
        }
    case 2:
        if case .success(let creation) = ShortLinkAPI.creation(body: bytes, config: config, native: true) {
            if case .alias(let alias) = creation.suffix { precondition(ShortLinkSuffix.aliasProblem(alias) == nil, "alias \(alias)") }
            parameterSets.append(creation.parameters)
        }
    case 3:
        let plan = ShortLinkImport.jsonLines(bytes, config: config)
        for candidate in plan.candidates {
            precondition(candidate.line >= 1 && candidate.line <= lines, "record line \(candidate.line) outside \(lines) lines")
            precondition(ShortLinkSuffix.aliasProblem(candidate.link.suffix) == nil, "suffix \(candidate.link.suffix)")
            parameterSets.append(candidate.link.parameters)
        }
        for skip in plan.skipped { precondition(skip.line >= 1 && skip.line <= lines, "skip line \(skip.line)") }
    default:
        let text = String(decoding: bytes, as: UTF8.self)
        if case .success(let code) = ClaimCode.signed(text, domain: "go.example.com", key: claimKey) {
            precondition(code.text(key: claimKey) == text, "a claim code with two spellings: \(text)")
        }
    }
    for parameters in parameterSets {
        guard case .success(let parsed) = FirebaseLongLink.rule(parameters, links: links, ownHosts: ["go.example.com"]) else { continue }
        for destination in [parsed.rule.web, parsed.rule.ios.fallback, parsed.rule.ios.ipadFallback, parsed.rule.android.fallback] {
            guard let text = destination?.value else { continue }
            guard let url = CheckedURL(text) else { preconditionFailure("a destination that is no checked URL: \(text)") }
            precondition(allowedHosts.contains(url.host), "a destination off the allowlist: \(text)")
        }
    }
    return 0
}
