/// Who is asking for a link, told from the User-Agent alone (no cookies, no IP, no fingerprint). The
/// table of signatures is here and in docs/links.md; `VisitorTests` holds real User-Agents of each class.
public enum Visitor: Sendable, Equatable, Hashable {
    case iPhone
    /// An iPad whose Safari says so. iPadOS's Safari asks for desktop sites by default and sends a Mac's
    /// User-Agent: a server cannot tell it from a Mac, so such an iPad is a `desktop` (docs/links.md).
    case iPad
    case android
    case desktop
    /// A link-preview fetcher or a search crawler: it reads the page's tags and never follows a store link.
    case crawler(String)
    /// An app's built-in browser, on iOS (`onIOS`) or Android: it swallows store redirects and seldom
    /// opens universal links.
    case inAppBrowser(String, onIOS: Bool)

    /// The metrics label of the class.
    public var label: String {
        switch self {
        case .iPhone: return "iphone"
        case .iPad: return "ipad"
        case .android: return "android"
        case .desktop: return "desktop"
        case .crawler: return "crawler"
        case .inAppBrowser: return "in-app"
        }
    }

    /// Signatures of preview fetchers and crawlers, as they appear in their User-Agents (case-sensitive).
    /// iMessage's previewer announces itself as facebookexternalhit and Twitterbot together.
    public static let crawlerSignatures: [(token: String, name: String)] = [
        ("facebookexternalhit", "Facebook"), ("Facebot", "Facebook"), ("meta-externalagent", "Facebook"),
        ("Slackbot", "Slack"), ("Slack-ImgProxy", "Slack"), ("Twitterbot", "X"), ("LinkedInBot", "LinkedIn"),
        ("Discordbot", "Discord"), ("TelegramBot", "Telegram"), ("WhatsApp/", "WhatsApp"), ("Applebot", "Applebot"),
        ("Googlebot", "Googlebot"), ("Google-InspectionTool", "Google"), ("bingbot", "Bing"), ("redditbot", "Reddit"),
        ("Pinterestbot", "Pinterest"), ("SkypeUriPreview", "Skype"), ("Embedly", "Embedly"), ("vkShare", "VK"),
        ("Iframely", "Iframely"), ("Mastodon/", "Mastodon"), ("Bluesky Cardyb", "Bluesky"), ("Snap URL Preview", "Snapchat"),
        ("DuckDuckBot", "DuckDuckGo"), ("YandexBot", "Yandex"), ("Baiduspider", "Baidu"),
    ]

    /// In-app browsers, by the token their app adds to the system browser's User-Agent.
    public static let inAppSignatures: [(token: String, name: String)] = [
        ("Instagram", "Instagram"), ("FBAN/", "Facebook"), ("FBAV/", "Facebook"), ("FB_IAB", "Facebook"),
        ("musical_ly", "TikTok"), ("BytedanceWebview", "TikTok"), ("TikTok", "TikTok"), ("Twitter for", "X"),
        ("TwitterAndroid", "X"), ("LinkedInApp", "LinkedIn"), ("Snapchat", "Snapchat"), (" Line/", "LINE"),
        ("MicroMessenger", "WeChat"), ("Pinterest/", "Pinterest"), ("GSA/", "Google app"), ("; wv)", "an app's web view"),
    ]

    public static func classify(_ userAgent: String) -> Visitor {
        var text = userAgent
        return text.withUTF8 { classify($0) }
    }

    private static let crawlerTable = crawlerSignatures.map { (Array($0.token.utf8), $0.name) }
    private static let inAppTable = inAppSignatures.map { (Array($0.token.utf8), $0.name) }
    private static let iPadToken = Array("iPad".utf8)
    private static let iPhoneToken = Array("iPhone".utf8)
    private static let iPodToken = Array("iPod".utf8)
    private static let androidToken = Array("Android".utf8)

    /// The User-Agent's bytes as the request carried them (a request head holds at most a few KB).
    public static func classify(_ userAgent: UnsafeBufferPointer<UInt8>) -> Visitor {
        for (token, name) in crawlerTable where contains(userAgent, token) { return .crawler(name) }
        let iPad = contains(userAgent, iPadToken)
        let iPhone = contains(userAgent, iPhoneToken) || contains(userAgent, iPodToken)
        for (token, name) in inAppTable where contains(userAgent, token) {
            return .inAppBrowser(name, onIOS: iPad || iPhone)
        }
        if iPad { return .iPad }
        if iPhone { return .iPhone }
        if contains(userAgent, androidToken) { return .android }
        return .desktop
    }

    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
            if haystack[start] == first {
                var offset = 1
                while offset < needle.count && haystack[start + offset] == needle[offset] { offset += 1 }
                if offset == needle.count { return true }
            }
            start += 1
        }
        return false
    }
}
