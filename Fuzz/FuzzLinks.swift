import AASA
import Links

/// The link-parameter parser and the User-Agent classifier: the input's first line is a User-Agent, the
/// rest an FDL long link's query. No crash; whatever the input, a redirect goes to the allowlist or a
/// store, and no page carries markup the input wrote.
let links = SiteLinks(
    app: LinkApp(name: "shop", appleID: "ABCDE12345.com.example.shop", appStoreID: "123", androidPackage: "com.example.shop"),
    openHost: Located("open.example.com"),
    rules: [],
    firebaseLongLinks: true,
    allow: DestinationAllowlist(entries: [.host("example.com"), .prefix(scheme: "https", host: "shop.example.com", path: "/app/")]),
    origin: .none
)
let allowedHosts: Set<String> = ["example.com", "shop.example.com", "apps.apple.com", "play.google.com"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    let newline = bytes.firstIndex(of: 0x0A) ?? bytes.count
    let visitor = Visitor.classify(UnsafeBufferPointer(rebasing: bytes[..<newline]))
    let query = String(decoding: bytes[min(newline + 1, bytes.count)...], as: UTF8.self)
    guard case .success(let parsed) = FirebaseLongLink.parse(query: query, links: links, ownHosts: ["go.example.com"]) else { return 0 }
    let request = LinkRequest(host: "go.example.com", path: "/", query: query, visitor: visitor)
    switch LinkRouting.decide(parsed.rule, captures: [], links: links, request: request) {
    case .redirect(let location, _):
        guard let url = CheckedURL(location) else { preconditionFailure("redirect to an unchecked URL: \(location)") }
        precondition(allowedHosts.contains(url.host), "redirect off the allowlist: \(location)")
    case .page(let content, _):
        let html = LinkPages.render(content)
        precondition(!html.contains("<script"), "markup from the input in a page")
    }
    return 0
}
