import Links
import Testing

/// The User-Agent classifier against real User-Agent strings of each class (as their apps and crawlers
/// sent them; sources: the vendors' crawler documentation and captured requests).
@Suite("Who is asking: the User-Agent classifier")
struct VisitorTests {
    static let iPhones = [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (iPod touch; CPU iPhone OS 15_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.6 Mobile/15E148 Safari/604.1",
    ]
    static let iPads = [
        "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
    ]
    static let androids = [
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Android 14; Mobile; rv:131.0) Gecko/131.0 Firefox/131.0",
    ]
    static let desktops = [
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        "curl/8.11.1",
        "",
    ]
    static let crawlers: [(String, String)] = [
        ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slack"),
        ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "Facebook"),
        // iMessage's link previewer.
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
            "Facebook"
        ),
        ("Twitterbot/1.0", "X"),
        ("LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "LinkedIn"),
        ("Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "Discord"),
        ("TelegramBot (like TwitterBot)", "Telegram"),
        ("WhatsApp/2.23.20.0", "WhatsApp"),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
            "Applebot"
        ),
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"),
    ]
    static let inApp: [(String, String, Bool)] = [
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91 (iPhone14,5; iOS 17_5; en_US; en; scale=3.00; 1170x2532; 618063433)",
            "Instagram", true
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.41.106;FBBV/613374421;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]",
            "Facebook", true
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/477.0.0.49.74;]",
            "Facebook", false
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_35.1.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US",
            "TikTok", true
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 trill_350301 BytedanceWebview/d8a21c6",
            "TikTok", false
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Twitter for iPhone/10.50",
            "X", true
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.8650",
            "LinkedIn", true
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/13.3.0.44 (like Safari/8618.2.12.10.7, panda)",
            "Snapchat", true
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Safari Line/14.10.0",
            "LINE", true
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 XWEB/1300259 MMWEBSDK/20240301 MicroMessenger/8.0.48.2580(0x28003036) WeChat/arm64 Weixin NetType/WIFI Language/en ABI/arm64",
            "WeChat", false
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36",
            "an app's web view", false
        ),
    ]

    @Test("Each class from real User-Agents; crawlers before in-app browsers before platforms")
    func classes() {
        for agent in Self.iPhones { #expect(Visitor.classify(agent) == .iPhone, "\(agent)") }
        for agent in Self.iPads { #expect(Visitor.classify(agent) == .iPad, "\(agent)") }
        for agent in Self.androids { #expect(Visitor.classify(agent) == .android, "\(agent)") }
        for agent in Self.desktops { #expect(Visitor.classify(agent) == .desktop, "\(agent)") }
        for (agent, name) in Self.crawlers { #expect(Visitor.classify(agent) == .crawler(name), "\(agent)") }
        for (agent, name, onIOS) in Self.inApp { #expect(Visitor.classify(agent) == .inAppBrowser(name, onIOS: onIOS), "\(agent)") }
    }

    @Test("iPadOS's desktop-class Safari sends a Mac's User-Agent: it is a desktop (the documented limit)")
    func iPadAsMac() {
        let iPadOS = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
        #expect(Visitor.classify(iPadOS) == .desktop)
    }

    @Test("An 8 KB User-Agent is classified (by what it contains) without trouble")
    func huge() {
        let filler = String(repeating: "A", count: 8_000)
        #expect(Visitor.classify(filler) == .desktop)
        #expect(Visitor.classify(filler + " iPhone") == .iPhone)
        #expect(Visitor.classify(filler + "Slackbot") == .crawler("Slack"))
    }

    /// The table's answer, the plain way: each class's first signature in list order that the text contains.
    static func reference(_ agent: String) -> Visitor {
        if let crawler = Visitor.crawlerSignatures.first(where: { agent.contains($0.token) }) { return .crawler(crawler.name) }
        let iPad = agent.contains("iPad")
        let iPhone = agent.contains("iPhone") || agent.contains("iPod")
        if let app = Visitor.inAppSignatures.first(where: { agent.contains($0.token) }) {
            return .inAppBrowser(app.name, onIOS: iPad || iPhone)
        }
        if iPad { return .iPad }
        if iPhone { return .iPhone }
        return agent.contains("Android") ? .android : .desktop
    }

    @Test("The skipping scan finds every signature at every offset: 20,000 random User-Agents agree with a plain search")
    func skippingScan() {
        var generator = SystemRandomNumberGenerator()
        let tokens = Visitor.crawlerSignatures.map(\.token) + Visitor.inAppSignatures.map(\.token) + ["iPad", "iPhone", "iPod", "Android"]
        // Bytes of the signatures themselves, so near-misses (a signature's prefix, a shifted pair) are common.
        let alphabet = Array(Set(tokens.joined())) + [" ", ";", "/"]
        for round in 0..<20_000 {
            var agent = String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                var token = tokens.randomElement(using: &generator)!
                // Now and then a signature cut short by one byte: it must not count.
                if Bool.random(using: &generator) && round % 3 == 0 { token.removeLast() }
                let cut = agent.index(agent.startIndex, offsetBy: Int.random(in: 0...agent.count, using: &generator))
                agent.insert(contentsOf: token, at: cut)
            }
            let expected = Self.reference(agent)
            #expect(Visitor.classify(agent) == expected, "\(agent)")
            if Visitor.classify(agent) != expected { return }
        }
    }

    @Test("Two visitors are equal exactly when their class and what it carries are: every pair of twelve, hashes agreeing")
    func equality() {
        let names = ["Slackbot", "Twitterbot"]
        var visitors: [Visitor] = [.iPhone, .iPad, .android, .desktop]
        visitors += names.map { .crawler($0) }
        visitors += names.flatMap { name in [Visitor.inAppBrowser(name, onIOS: true), .inAppBrowser(name, onIOS: false)] }
        visitors += [.crawler("Slack" + "bot"), .inAppBrowser(String("Twitterbot".reversed().reversed()), onIOS: false)]
        // The last two equal earlier ones by value, built apart: equality reads the names, not their storage.
        func same(_ a: Visitor, _ b: Visitor) -> Bool {
            switch (a, b) {
            case (.iPhone, .iPhone), (.iPad, .iPad), (.android, .android), (.desktop, .desktop): return true
            case (.crawler(let x), .crawler(let y)): return Array(x.utf8) == Array(y.utf8)
            case (.inAppBrowser(let x, let i), .inAppBrowser(let y, let j)): return Array(x.utf8) == Array(y.utf8) && i == j
            default: return false
            }
        }
        for a in visitors {
            for b in visitors {
                #expect((a == b) == same(a, b), "\(a) and \(b)")
                if a == b { #expect(a.hashValue == b.hashValue) }
            }
        }
    }
}
