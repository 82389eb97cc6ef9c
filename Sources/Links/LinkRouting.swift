public import AASA
import Support

/// A link request as the router needs it: the host it came to, its path and query as sent, and who sent it.
public struct LinkRequest: Sendable {
    public var host: String
    public var path: String
    public var query: String?
    public var visitor: Visitor

    public init(host: String, path: String, query: String?, visitor: Visitor) {
        self.host = host
        self.path = path
        self.query = query
        self.visitor = visitor
    }

    /// The URL that was clicked.
    public var url: String { "https://\(host)\(path)" + (query.map { "?\($0)" } ?? "") }
}

/// What a visitor without the app gets, and why: the metrics' outcome label.
public enum LinkOutcome: String, Sendable, CaseIterable {
    case store
    case fallback
    case web
    case landing
    case preview
    case inApp = "in-app"
}

/// The answer to one link request, before it is HTML or a header.
public enum LinkDecision: Sendable, Equatable {
    case redirect(String, LinkOutcome)
    case page(LinkPageContent, LinkOutcome)

    public var outcome: LinkOutcome {
        switch self {
        case .redirect(_, let outcome), .page(_, let outcome): return outcome
        }
    }
}

/// What a landing, preview or in-app page shows; rendered by ``LinkPages``.
public struct LinkPageContent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case landing
        case preview
        case inAppBrowser(String)
    }

    public struct Button: Sendable, Equatable {
        public var label: String
        public var url: String
        public var primary: Bool
    }

    public var kind: Kind
    public var linkURL: String
    public var deepLink: String
    public var title: String
    public var description: String?
    public var image: String?
    public var app: LinkApp?
    /// The Smart App Banner (iOS Safari): shown with the app's App Store ID and the deep link.
    public var smartBanner: Bool
    public var web: String?
    public var buttons: [Button]
    /// A stored short link's deferred deep link: the path the App Store button asks for a claim code
    /// (`/_/c/<suffix>`), copied to the clipboard on the tap before the store opens; nil for other pages.
    public var claimPath: String? = nil

    /// The page has an App Store button that copies a claim URL (and so the script that does it).
    public var copiesClaim: Bool { claimPath != nil && buttons.contains { $0.url.hasPrefix(StoreLinks.appStorePrefix) } }
}

/// A link rule with its destination templates parsed once, when the config loads. A class: a request
/// borrows it from the site's list instead of copying its dozen references. It keeps only what routing
/// reads, not the rule (a million link rules would otherwise be held twice: here and in the site's config).
public final class PreparedLinkRule: Sendable {
    let straightToStore: Bool
    let androidLanding: Bool
    let minVersionCode: Int?
    let preview: LinkPreview?
    let deepLink: LinkTemplate?
    let web: LinkTemplate?
    let iosFallback: LinkTemplate?
    let ipadFallback: LinkTemplate?
    let androidFallback: LinkTemplate?
    /// The App Store page with the rule's tokens: the same for every request.
    let appStore: String?

    public init(_ rule: LinkRule, app: LinkApp?) {
        straightToStore = rule.ios.straightToStore
        androidLanding = rule.android.landing
        minVersionCode = rule.android.minVersionCode
        preview = rule.preview
        let literal = rule.literalDestinations
        func parse(_ template: Located<String>?) -> LinkTemplate? {
            template.flatMap { literal ? LinkTemplate.literal($0.value) : try? LinkTemplate.parse($0.value).get() }
        }
        deepLink = parse(rule.deepLink)
        web = parse(rule.web)
        iosFallback = parse(rule.ios.fallback)
        ipadFallback = parse(rule.ios.ipadFallback)
        androidFallback = parse(rule.android.fallback)
        appStore = app.flatMap { StoreLinks.appStore($0, rule.ios) }
    }
}

/// The routing of a link per visitor (docs/links.md): pure, from the rule, the site's app and the request.
/// Only what the visitor's answer needs is built: a desktop's redirect fills in one template.
public enum LinkRouting {
    public static func decide(_ rule: LinkRule, captures: [String], links: SiteLinks, request: LinkRequest) -> LinkDecision {
        decide(PreparedLinkRule(rule, app: links.app), captures: captures, links: links, request: request)
    }

    public static func decide(_ prepared: PreparedLinkRule, captures: [String], links: SiteLinks, request: LinkRequest) -> LinkDecision {
        let app = links.app
        func expand(_ template: LinkTemplate?) -> String? {
            template?.expand(captures: captures, path: request.path, query: request.query)
        }
        let appStore = prepared.appStore
        switch request.visitor {
        case .iPhone, .iPad:
            if request.visitor == .iPad, let fallback = expand(prepared.ipadFallback) { return .redirect(fallback, .fallback) }
            if let fallback = expand(prepared.iosFallback) { return .redirect(fallback, .fallback) }
            if prepared.straightToStore, let appStore { return .redirect(appStore, .store) }
            if app?.appleID == nil && appStore == nil, let web = expand(prepared.web) { return .redirect(web, .web) }
        case .android:
            if let fallback = expand(prepared.androidFallback) { return .redirect(fallback, .fallback) }
            if !prepared.androidLanding || app?.androidPackage == nil {
                if let package = app?.androidPackage {
                    let deepLink = expand(prepared.deepLink) ?? request.url
                    return .redirect(StoreLinks.playStore(package: package, referrer: deepLink), .store)
                }
                if let web = expand(prepared.web) { return .redirect(web, .web) }
            }
        case .desktop:
            if let web = expand(prepared.web) { return .redirect(web, .web) }
        case .crawler, .inAppBrowser:
            break
        }
        // A page: everything it may show.
        let linkURL = request.url
        let deepLink = expand(prepared.deepLink) ?? linkURL
        let web = expand(prepared.web)
        let appName = app?.title ?? "the app"
        func page(_ kind: LinkPageContent.Kind, buttons: [LinkPageContent.Button], banner: Bool) -> LinkPageContent {
            LinkPageContent(
                kind: kind,
                linkURL: linkURL,
                deepLink: deepLink,
                title: prepared.preview?.title ?? app?.title ?? request.host,
                description: prepared.preview?.description,
                image: prepared.preview?.image,
                app: app,
                smartBanner: banner && app?.appStoreID != nil,
                web: web,
                buttons: buttons
            )
        }
        func iosButtons() -> [LinkPageContent.Button] {
            var buttons: [LinkPageContent.Button] = []
            if let openHost = links.openHost {
                let url = "https://\(openHost.value)\(request.path)" + (request.query.map { "?\($0)" } ?? "")
                buttons.append(.init(label: "Open in \(appName)", url: url, primary: appStore == nil))
            }
            if let appStore { buttons.append(.init(label: "Get \(appName) on the App Store", url: appStore, primary: true)) }
            if let web { buttons.append(.init(label: "Continue on the web", url: web, primary: false)) }
            return buttons
        }
        func androidButtons() -> [LinkPageContent.Button] {
            var buttons: [LinkPageContent.Button] = []
            guard let package = app?.androidPackage else {
                return web.map { [.init(label: "Continue on the web", url: $0, primary: false)] } ?? []
            }
            let play = StoreLinks.playStore(package: package, referrer: deepLink)
            let intent = StoreLinks.intent(
                host: request.host,
                path: request.path,
                query: request.query,
                package: package,
                fallback: expand(prepared.androidFallback) ?? play,
                minVersionCode: prepared.minVersionCode
            )
            buttons.append(.init(label: "Open in \(appName)", url: intent, primary: true))
            buttons.append(.init(label: "Get \(appName) on Google Play", url: play, primary: false))
            if let web { buttons.append(.init(label: "Continue on the web", url: web, primary: false)) }
            return buttons
        }
        switch request.visitor {
        case .crawler:
            // Never a redirect: the preview must show the link's own title and image, not a store page.
            return .page(page(.preview, buttons: [], banner: true), .preview)
        case .iPhone, .iPad:
            return .page(page(.landing, buttons: iosButtons(), banner: true), .landing)
        case .android:
            return .page(page(.landing, buttons: androidButtons(), banner: false), .landing)
        case .inAppBrowser(let name, let onIOS):
            // A store redirect inside an app's browser goes nowhere: offer the app and the real browser.
            return .page(page(.inAppBrowser(name), buttons: onIOS ? iosButtons() : androidButtons(), banner: onIOS), .inApp)
        case .desktop:
            return .page(page(.landing, buttons: iosButtons(), banner: false), .landing)
        }
    }
}

/// The store and intent URLs, in the forms Apple, Google and Chrome document.
public enum StoreLinks {
    public static let appStorePrefix = "https://apps.apple.com/app/id"

    /// `https://apps.apple.com/app/id<ID>` with the campaign (`ct`) and provider (`pt`) tokens.
    public static func appStore(_ app: LinkApp, _ route: IOSRoute) -> String? {
        guard let id = app.appStoreID else { return nil }
        var items: [String] = []
        for (name, value) in [
            ("pt", route.providerToken), ("ct", route.campaignToken), ("at", route.affiliateToken), ("mt", route.mediaType),
        ] {
            if let value { items.append(name + "=" + URLText.queryValue(value)) }
        }
        return appStorePrefix + "\(id)" + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    }

    /// The Play Store page with the deep link as the install referrer (read once by the installed app
    /// through the Play Install Referrer API).
    public static func playStore(package: String, referrer: String) -> String {
        "https://play.google.com/store/apps/details?id=\(URLText.queryValue(package))&referrer=\(URLText.queryValue(referrer))"
    }

    /// Chrome's intent URL: opens the app on a tap, else the fallback (Chrome strips it before the app
    /// sees the intent). The minimum version code travels as an extra the app compares with its own.
    public static func intent(
        host: String,
        path: String,
        query: String?,
        package: String,
        fallback: String,
        minVersionCode: Int?
    )
        -> String
    {
        // A '#' would end the URL part of the intent early.
        let target = URLText.safe(path) + (query.map { "?" + URLText.safe($0) } ?? "")
        var url = "intent://\(host)" + target.replacingAll("#", with: "%23")
        url += "#Intent;scheme=https;package=\(package);"
        if let minVersionCode { url += "i.amv=\(minVersionCode);" }
        url += "S.browser_fallback_url=\(URLText.queryValue(fallback));end"
        return url
    }
}
