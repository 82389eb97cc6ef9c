import AASA
import HTTP1
import Links
import Support

/// The reserved paths of deferred deep links and app events (docs/short-links.md), past the stylesheet
/// and the QR codes: `/_/c/…` (a claim URL: made for a link by the landing page's button, followed by a
/// browser), `/_/claim/<code>` (the app claims it) and `/_/open` (the app reports an open). Decided here
/// from the request alone; what needs the clock, randomness or the store is a ``ClaimAction``.
enum DeferredLinkRoutes {
    static let prefix = Array(ReservedPaths.prefix.utf8)
    static let claimURLPrefix = "c/"
    static let redeemPrefix = "claim/"
    static let openName = "open"

    /// Nil: no such path (the caller's 404).
    static func answer(
        _ head: RequestHead,
        path: UnsafeBufferPointer<UInt8>,
        buffer: UnsafeBufferPointer<UInt8>,
        host: String,
        storedLinks: ShortLinkTable?
    ) -> LinkAnswer? {
        let name = String(decoding: UnsafeBufferPointer(rebasing: path[prefix.count...]), as: UTF8.self)
        let target = UnsafeBufferPointer(rebasing: buffer[head.targetRange])
        let query = target.firstIndex(of: UInt8(ascii: "?")).map {
            String(decoding: UnsafeBufferPointer(rebasing: target[($0 + 1)...]), as: UTF8.self)
        }
        let userAgent = head.userAgentRange.map { String(decoding: UnsafeBufferPointer(rebasing: buffer[$0]), as: UTF8.self) }
        func plain(_ response: PreparedResponse, claim: ClaimAction? = nil) -> LinkAnswer {
            LinkAnswer(response: response, visitor: "-", outcome: "-", claim: claim)
        }
        func only(_ method: HTTPMethod, _ allow: String) -> LinkAnswer? {
            head.method == method
                ? nil : plain(StandardResponses.error(status: 405, "/_/\(name) answers \(allow)", extraHeaders: [("Allow", allow)]))
        }
        guard let table = storedLinks, let key = table.claimKey else {
            return name.hasPrefix(claimURLPrefix) || name.hasPrefix(redeemPrefix) || name == openName ? plain(noStore) : nil
        }
        if name.hasPrefix(redeemPrefix) {
            if let refused = only(.get, "GET") { return refused }
            let code = String(name.dropFirst(redeemPrefix.count))
            return plain(noClaim, claim: .redeem(code: code, domain: host, platform: platform(query: query, userAgent: userAgent)))
        }
        if name.hasPrefix(claimURLPrefix) {
            let rest = String(name.dropFirst(claimURLPrefix.count))
            if head.method == .post {
                guard let link = table.link(domain: host, path: "/" + rest), link.state == .active,
                    !table.disabledDomains.contains(host)
                else { return plain(noLink) }
                return plain(noLink, claim: .claimURL(domain: host, suffix: rest))
            }
            guard head.method == .get || head.method == .head else {
                return plain(
                    StandardResponses.error(
                        status: 405,
                        "a claim URL answers GET and HEAD; POST asks for one",
                        extraHeaders: [("Allow", "GET, HEAD, POST")]
                    )
                )
            }
            // Followed in a browser (pasted, or an app that does not claim): the link itself, claim kept.
            guard case .success(let code) = ClaimCode.signed(rest, domain: host, key: key) else { return plain(noClaim) }
            return plain(
                PreparedResponse(shared: LinkResponder.redirectHeaders, field: "Location", value: "https://\(host)/\(code.suffix)")
            )
        }
        if name == openName {
            if let refused = only(.post, "POST") { return refused }
            let items = queryItems(query)
            guard let event = items["event"], event == "first-open" || event == "re-open" else {
                return plain(StandardResponses.error(status: 400, "event must be first-open or re-open"))
            }
            guard let given = items["link"], let (domain, suffix) = StoredLink.locate(given.contains("/") ? given : host + "/" + given),
                domain == host, let link = table.link(domain: host, path: "/" + suffix)
            else { return plain(StandardResponses.error(status: 404, "link names no short link of this host")) }
            return LinkAnswer(
                response: opened,
                visitor: platform(query: query, userAgent: userAgent),
                outcome: event,
                stored: link.id
            )
        }
        return nil
    }

    /// The app's platform for the numbers: `platform=ios|android` in the query, else what its HTTP
    /// client's User-Agent says (CFNetwork and Darwin on Apple's systems, Android, okhttp, Dalvik).
    static func platform(query: String?, userAgent: String?) -> String {
        if let given = queryItems(query)["platform"], given == "ios" || given == "android" { return given }
        guard let agent = userAgent?.lowercased() else { return "other" }
        if ["cfnetwork", "darwin", "iphone", "ipad", "ios"].contains(where: agent.contains) { return "ios" }
        if ["android", "okhttp", "dalvik"].contains(where: agent.contains) { return "android" }
        return "other"
    }

    /// The query's items, decoded as a form sends them (the first of a repeated name; an undecodable one
    /// left out).
    static func queryItems(_ query: String?) -> [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let equals = pair.firstIndex(of: "=") ?? pair.endIndex
            guard let name = URLText.formDecoded(pair[..<equals]),
                let value = URLText.formDecoded(equals == pair.endIndex ? "" : pair[pair.index(after: equals)...])
            else { continue }
            if items[name] == nil { items[name] = value }
        }
        return items
    }

    static let noStore = StandardResponses.error(status: 404, "short links are not served here: no link store")
    static let noLink = StandardResponses.error(status: 404, "no active short link with that suffix on this host")
    static let noClaim = StandardResponses.error(status: 404, "no such claim code")
    static let opened = PreparedResponse(status: 204, headers: [("Server", "aasa-server"), ("Cache-Control", "no-store")], body: [])
}
