/// A site's link paths: what a visitor the app did not catch gets — a store, a fallback, the web, a
/// landing page or a preview (docs/links.md). Boxed: most sites have none, and a site is copied from one
/// reload to the next.
public final class SiteLinks: Sendable {
    /// The app the links open, resolved from `apps` (its App Store ID, name, icon, Android package).
    public let app: LinkApp?
    /// A second host whose AASA opens the same paths: "Open in the app" points there, because a tap on a
    /// link to the page's own host stays in Safari (Apple's same-domain rule).
    public let openHost: Located<String>?
    /// In order: the first rule that matches a path decides it.
    public let rules: [LinkRule]
    /// Firebase Dynamic Links long links (`/?link=…&apn=…`) are routed as FDL documented.
    public let firebaseLongLinks: Bool
    /// Where URLs a request carries (an FDL long link's `link` and fallbacks) may send a visitor.
    public let allow: DestinationAllowlist
    /// The team's landing page template, as written (resolved against the config's directory when read).
    public let landingPage: Located<String>?
    /// Origins (`https://cdn.example.com`) the landing page template may show images from, beside the
    /// app's icon and the preview image.
    public let imageOrigins: [String]
    public let origin: Provenance

    public init(
        app: LinkApp?,
        openHost: Located<String>?,
        rules: [LinkRule],
        firebaseLongLinks: Bool = false,
        allow: DestinationAllowlist = DestinationAllowlist(entries: []),
        landingPage: Located<String>? = nil,
        imageOrigins: [String] = [],
        origin: Provenance
    ) {
        self.landingPage = landingPage
        self.imageOrigins = imageOrigins
        self.app = app
        self.openHost = openHost
        self.rules = rules
        self.firebaseLongLinks = firebaseLongLinks
        self.allow = allow
        self.origin = origin
    }
}

extension SiteLinks {
    /// The same links without where each value was written: what serving needs, at a fraction of the
    /// memory (every position is a chain of path steps; a million link sites keep none of them).
    public func servingForm() -> SiteLinks {
        func bare(_ value: Located<String>?) -> Located<String>? { value.map { Located($0.value) } }
        let bareRules = rules.map { rule -> LinkRule in
            var component = rule.component
            component.origin = .none
            component.comment = nil
            if case .items(let items)? = component.query {
                component.query = .items(items.map { QueryItemPattern(name: $0.name, pattern: $0.pattern) })
            }
            var copy = LinkRule(component: component)
            copy.deepLink = bare(rule.deepLink)
            copy.web = bare(rule.web)
            copy.ios = rule.ios
            copy.ios.fallback = bare(rule.ios.fallback)
            copy.ios.ipadFallback = bare(rule.ios.ipadFallback)
            copy.android = rule.android
            copy.android.fallback = bare(rule.android.fallback)
            copy.preview = rule.preview
            copy.webOnly = rule.webOnly
            return copy
        }
        return SiteLinks(
            app: app,
            openHost: bare(openHost),
            rules: bareRules,
            firebaseLongLinks: firebaseLongLinks,
            allow: allow,
            landingPage: bare(landingPage),
            imageOrigins: imageOrigins,
            origin: .none
        )
    }
}

/// The app a site's links open, with what a store page and a landing page need of it.
public struct LinkApp: Sendable, Equatable {
    public var name: String
    /// `TEAMID.bundle.id`, when the app has an Apple side.
    public var appleID: String?
    public var appStoreID: String?
    /// The name people know the app by (the landing page's heading); the app's config name otherwise.
    public var title: String
    /// An https URL of the app's icon.
    public var icon: String?
    public var androidPackage: String?

    public init(
        name: String,
        appleID: String? = nil,
        appStoreID: String? = nil,
        title: String? = nil,
        icon: String? = nil,
        androidPackage: String? = nil
    ) {
        self.name = name
        self.appleID = appleID
        self.appStoreID = appStoreID
        self.title = title ?? name
        self.icon = icon
        self.androidPackage = androidPackage
    }
}

/// What the top-level `apps` entry says about an app's store listing.
public struct AppListing: Sendable, Equatable {
    public var appStoreID: String?
    public var title: String?
    public var icon: String?

    public init(appStoreID: String? = nil, title: String? = nil, icon: String? = nil) {
        self.appStoreID = appStoreID
        self.title = title
        self.icon = icon
    }
}

/// One link rule: which paths (an AASA component: `/`, `?`, `#`, `exclude`, `caseSensitive`) and where
/// each kind of visitor goes.
public struct LinkRule: Sendable {
    public var component: Component
    /// What the app receives (Smart App Banner's `app-argument`, the Play referrer); nil: the URL itself.
    public var deepLink: Located<String>?
    /// Desktops, and the last fallback of every platform.
    public var web: Located<String>?
    public var ios = IOSRoute()
    public var android = AndroidRoute()
    public var preview: LinkPreview?
    /// A path the app never opens (no AASA coverage expected): every visitor is routed.
    public var webOnly = false
    /// The destinations are URLs as they are, not templates (an FDL link's parameters: a `{` in one is a
    /// character of the URL, and nothing needs parsing per click).
    public var literalDestinations = false
    public var origin: Provenance = .none

    public init(component: Component, origin: Provenance = .none) {
        self.component = component
        self.origin = origin
    }

    public var isExclusion: Bool { component.exclude }
}

public struct IOSRoute: Sendable {
    /// Instead of the App Store (FDL's `ifl`).
    public var fallback: Located<String>?
    /// For iPads, instead of `fallback` (FDL's `ipfl`).
    public var ipadFallback: Located<String>?
    /// Straight to the App Store, no landing page (FDL's `efr=1`).
    public var straightToStore = false
    /// App Store campaign token (`ct`, at most 40 bytes) and provider token (`pt`).
    public var campaignToken: String?
    public var providerToken: String?
    /// The affiliate token (`at`) and media type (`mt`) an FDL long link may carry.
    public var affiliateToken: String?
    public var mediaType: String?

    public init() {}
}

public struct AndroidRoute: Sendable {
    /// Instead of the Play Store (FDL's `afl`).
    public var fallback: Located<String>?
    /// Installs older than this are sent to the Play Store to update (FDL's `amv`): carried to the app in
    /// the intent, which compares it with its own version code.
    public var minVersionCode: Int?
    /// A landing page with an "Open in the app" intent button instead of a redirect to the store.
    public var landing = false

    public init() {}
}

/// What a link preview (Slack, iMessage, WhatsApp…) shows.
public struct LinkPreview: Sendable, Equatable {
    public var title: String?
    public var description: String?
    /// An https URL (PNG or JPEG: Facebook ignores SVG).
    public var image: String?

    public init(title: String? = nil, description: String? = nil, image: String? = nil) {
        self.title = title
        self.description = description
        self.image = image
    }
}

/// The path space the server keeps for itself on link domains (FDL kept `/_/`): never a link, never in
/// the generated association files.
public enum ReservedPaths {
    public static let prefix = "/_/"
    public static let stylesheet = "/_/link.css"
    /// The AASA component that keeps the reserved space out of the app.
    /// FDL long links live at the root with a `link` parameter: the component that opens them in the app.
    public static var firebaseLongLink: Component {
        var component = Component()
        component.path = "/"
        component.query = .items([QueryItemPattern(name: "link", pattern: "?*")])
        component.comment = "Firebase Dynamic Links long links"
        return component
    }

    public static var exclusion: Component {
        var component = Component()
        component.path = prefix + "*"
        component.exclude = true
        component.comment = "aasa-server's own pages on link domains"
        return component
    }
}
