import AASA
import Links

/// The readers of short links that arrive from outside: FDL's shortLinks request body and Google's Takeout
/// CSV (the input's first byte picks one). No crash; whatever the input, a rule made of it sends a visitor
/// only to the allowlist (or the site's own app's stores), and every CSV row names a line of the input.
let links = SiteLinks(
    app: LinkApp(name: "shop", appleID: "ABCDE12345.com.example.shop", appStoreID: "123", androidPackage: "com.example.shop"),
    openHost: nil,
    rules: [],
    firebaseLongLinks: true,
    allow: DestinationAllowlist(entries: [.host("example.com"), .prefix(scheme: "https", host: "shop.example.com", path: "/app/")]),
    origin: .none
)
let allowedHosts: Set<String> = ["example.com", "shop.example.com"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: count - 1))
    var parameterSets: [[String: String]] = []
    if data[0] & 1 == 0 {
        if case .success(let request) = FirebaseShortLinkRequest.decode(bytes) { parameterSets.append(request.parameters) }
    } else if case .success(let read) = TakeoutCSV.read(bytes) {
        let lines = bytes.count { $0 == 0x0A } + 1
        for row in read.rows {
            precondition(row.line >= 1 && row.line <= lines, "row line \(row.line) outside the input's \(lines) lines")
            parameterSets.append(row.parameters)
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
