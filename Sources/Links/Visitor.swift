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

    /// Written out: the derived comparison copied both values (and their names) before looking at either
    /// case, about 50 instructions of every link answer served from the loop's cache.
    public static func == (lhs: Visitor, rhs: Visitor) -> Bool {
        switch (lhs, rhs) {
        case (.iPhone, .iPhone), (.iPad, .iPad), (.android, .android), (.desktop, .desktop): return true
        case (.crawler(let left), .crawler(let right)): return left == right
        case (.inAppBrowser(let left, let leftOnIOS), .inAppBrowser(let right, let rightOnIOS)):
            return leftOnIOS == rightOnIOS && left == right
        case (.iPhone, _), (.iPad, _), (.android, _), (.desktop, _), (.crawler, _), (.inAppBrowser, _): return false
        }
    }

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

    private enum Kind: UInt8 {
        case crawler, inApp, iPad, iPhone, android
    }

    /// One signature seen through one of its first byte pairs: found at `position`, the signature would
    /// start at `position - pairOffset`. Plain values, so the scan touches no reference counts.
    private struct Probe {
        let pair: Int
        let pairOffset: Int
        /// Where the signature's bytes are in ``Table/bytes``.
        let offset: Int
        let count: Int
        let kind: Kind
        /// Index into the class's signature list (for the name).
        let index: Int
    }

    /// How the User-Agent is read once, skipping most of it. Every signature is at least `shortest` bytes
    /// long, so a signature covers `shortest - 1` consecutive byte pairs at its start; reading only every
    /// `(shortest - 1)`th pair of the User-Agent meets one of them. The probes are filed by a hash of their
    /// pair into 4,096 buckets, so a pair no signature has near its start mostly finds an empty bucket,
    /// and a full one holds a probe or two. A browser's User-Agent costs a few dozen lookups and a handful
    /// of comparisons.
    private struct Table {
        var bytes: [UInt8] = []
        /// Ordered by bucket; a bucket's probes are `start[b]..<start[b + 1]`.
        var probes: [Probe] = []
        var start = [UInt16](repeating: 0, count: bucketCount + 1)
        var step = 1
    }

    private static let bucketCount = 4096

    /// Fibonacci-style hashing of the 16-bit pair to 12 bits: the product's middle bits mix both bytes.
    @inline(__always)
    private static func bucket(_ pair: Int) -> Int { (pair &* 40_503) &>> 4 & (bucketCount - 1) }

    private static let table: Table = {
        var all: [(bytes: [UInt8], kind: Kind, index: Int)] = []
        for (index, signature) in crawlerSignatures.enumerated() { all.append((Array(signature.token.utf8), .crawler, index)) }
        for (index, signature) in inAppSignatures.enumerated() { all.append((Array(signature.token.utf8), .inApp, index)) }
        all += [(Array("iPad".utf8), .iPad, 0), (Array("iPhone".utf8), .iPhone, 0), (Array("iPod".utf8), .iPhone, 0)]
        all.append((Array("Android".utf8), .android, 0))
        let shortest = all.map(\.bytes.count).min() ?? 2
        precondition(shortest >= 2, "a signature of one byte cannot be found by its byte pairs")
        var table = Table()
        table.step = shortest - 1
        var probes: [(bucket: Int, probe: Probe)] = []
        for entry in all {
            let offset = table.bytes.count
            table.bytes += entry.bytes
            for pairOffset in 0..<table.step {
                let pair = Int(entry.bytes[pairOffset]) << 8 | Int(entry.bytes[pairOffset + 1])
                let probe = Probe(
                    pair: pair,
                    pairOffset: pairOffset,
                    offset: offset,
                    count: entry.bytes.count,
                    kind: entry.kind,
                    index: entry.index
                )
                probes.append((bucket(pair), probe))
            }
        }
        probes.sort { $0.bucket < $1.bucket }
        table.probes = probes.map(\.probe)
        for (bucket, _) in probes { table.start[bucket + 1] += 1 }
        for index in 1...bucketCount { table.start[index] += table.start[index - 1] }
        return table
    }()

    /// The User-Agent's bytes as the request carried them (a request head holds at most a few KB).
    public static func classify(_ userAgent: UnsafeBufferPointer<UInt8>) -> Visitor {
        // The first signature of each class in list order wins, as a scan per signature would give.
        var crawler = Int.max
        var inApp = Int.max
        var seen: UInt8 = 0
        let table = table
        let count = userAgent.count
        table.bytes.withUnsafeBufferPointer { signatureBytes in
            table.probes.withUnsafeBufferPointer { probes in
                table.start.withUnsafeBufferPointer { start in
                    var position = 0
                    while position + 1 < count {
                        defer { position += table.step }
                        let pair = Int(userAgent[position]) &<< 8 | Int(userAgent[position + 1])
                        let bucket = bucket(pair)
                        for candidate in Int(start[bucket])..<Int(start[bucket + 1]) {
                            let probe = probes[candidate]
                            guard probe.pair == pair else { continue }
                            let begin = position - probe.pairOffset
                            guard begin >= 0, probe.count <= count - begin else { continue }
                            var offset = 0
                            while offset < probe.count && userAgent[begin + offset] == signatureBytes[probe.offset + offset] {
                                offset += 1
                            }
                            guard offset == probe.count else { continue }
                            switch probe.kind {
                            case .crawler: crawler = min(crawler, probe.index)
                            case .inApp: inApp = min(inApp, probe.index)
                            default: seen |= 1 << probe.kind.rawValue
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
