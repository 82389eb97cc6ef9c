public import AASA

/// What every kind of visitor gets for one link, in words: FDL's debug page (`d=1`), `match` on a link
/// domain and the console share it.
public enum LinkFlow {
    /// One representative of each class the router tells apart.
    public static let visitors: [(name: String, visitor: Visitor)] = [
        ("iPhone", .iPhone), ("iPad", .iPad), ("Android", .android), ("desktop", .desktop), ("link preview", .crawler("Slack")),
        ("in-app browser on iOS", .inAppBrowser("Instagram", onIOS: true)),
        ("in-app browser on Android", .inAppBrowser("Instagram", onIOS: false)),
    ]

    public static func flow(
        _ rule: LinkRule,
        captures: [String],
        links: SiteLinks,
        host: String,
        path: String,
        query: String?
    )
        -> [(name: String, decision: LinkDecision)]
    {
        visitors.map { name, visitor in
            let request = LinkRequest(host: host, path: path, query: query, visitor: visitor)
            return (name, LinkRouting.decide(rule, captures: captures, links: links, request: request))
        }
    }

    public static func describe(_ decision: LinkDecision) -> String {
        switch decision {
        case .redirect(let location, let outcome):
            let what: String
            switch outcome {
            case .store: what = "the store"
            case .fallback: what = "the fallback"
            default: what = "the web"
            }
            return "302 to \(what): \(location)"
        case .page(let content, _):
            let buttons = content.buttons.map { "\($0.label) → \($0.url)" }
            let kind: String
            switch content.kind {
            case .preview: return "200 preview page: \"\(content.title)\"" + (content.image.map { ", image \($0)" } ?? "")
            case .landing: kind = "200 landing page"
            case .inAppBrowser: kind = "200 in-app browser page"
            }
            return kind + (content.smartBanner ? " with the Smart App Banner" : "")
                + (buttons.isEmpty ? "" : "; buttons: " + buttons.joined(separator: "; "))
        }
    }
}
