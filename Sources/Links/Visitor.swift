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

    /// The signatures by their first byte, so the User-Agent is read once: at each position only the
    /// tokens starting with that byte are compared (a browser's User-Agent costs a few hundred comparisons).
    private enum Kind: UInt8 {
        case crawler, inApp, iPad, iPhone, android
    }

    /// A signature inside ``signatureBytes``: plain values, so the scan touches no reference counts.
    private struct Token {
        let offset: Int
        let count: Int
        let kind: Kind
        /// Index into the class's signature list (for the name).
        let index: Int
    }

    /// Every signature's bytes, one after another; the tokens ordered by first byte; where each first
    /// byte's tokens start (257 entries, so a byte's tokens are `start[b]..<start[b + 1]`).
    private static let signatures: (bytes: [UInt8], tokens: [Token], start: [Int]) = {
        var all: [(bytes: [UInt8], kind: Kind, index: Int)] = []
        for (index, signature) in crawlerSignatures.enumerated() { all.append((Array(signature.token.utf8), .crawler, index)) }
        for (index, signature) in inAppSignatures.enumerated() { all.append((Array(signature.token.utf8), .inApp, index)) }
        all += [(Array("iPad".utf8), .iPad, 0), (Array("iPhone".utf8), .iPhone, 0), (Array("iPod".utf8), .iPhone, 0)]
        all.append((Array("Android".utf8), .android, 0))
        all.sort { $0.bytes[0] < $1.bytes[0] }
        var bytes: [UInt8] = []
        var tokens: [Token] = []
        var start = [Int](repeating: 0, count: 257)
        for entry in all {
            tokens.append(Token(offset: bytes.count, count: entry.bytes.count, kind: entry.kind, index: entry.index))
            bytes += entry.bytes
            start[Int(entry.bytes[0]) + 1] += 1
        }
        for index in 1..<257 { start[index] += start[index - 1] }
        return (bytes, tokens, start)
    }()

    /// The User-Agent's bytes as the request carried them (a request head holds at most a few KB).
    public static func classify(_ userAgent: UnsafeBufferPointer<UInt8>) -> Visitor {
        // The first signature of each class in list order wins, as a scan per signature would give.
        var crawler = Int.max
        var inApp = Int.max
        var seen: UInt8 = 0
        let table = signatures
        table.bytes.withUnsafeBufferPointer { signatureBytes in
            table.tokens.withUnsafeBufferPointer { tokens in
                table.start.withUnsafeBufferPointer { start in
                    for position in 0..<userAgent.count {
                        let first = Int(userAgent[position])
                        var candidate = start[first]
                        let end = start[first + 1]
                        while candidate < end {
                            let token = tokens[candidate]
                            candidate += 1
                            guard token.count <= userAgent.count - position else { continue }
                            var offset = 1
                            while offset < token.count && userAgent[position + offset] == signatureBytes[token.offset + offset] {
                                offset += 1
                            }
                            guard offset == token.count else { continue }
                            switch token.kind {
                            case .crawler: crawler = min(crawler, token.index)
                            case .inApp: inApp = min(inApp, token.index)
                            default: seen |= 1 << token.kind.rawValue
                            }
                        }
                    }
                }
            }
        }
        if crawler != Int.max { return .crawler(crawlerSignatures[crawler].name) }
        let iPad = seen & (1 << Kind.iPad.rawValue) != 0
        let iPhone = seen & (1 << Kind.iPhone.rawValue) != 0
        if inApp != Int.max { return .inAppBrowser(inAppSignatures[inApp].name, onIOS: iPad || iPhone) }
        if iPad { return .iPad }
        if iPhone { return .iPhone }
        if seen & (1 << Kind.android.rawValue) != 0 { return .android }
        return .desktop
    }
}
