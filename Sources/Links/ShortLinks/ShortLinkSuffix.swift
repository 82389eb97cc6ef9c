/// The path of a short link on a customer's domain (`https://go.example.com/<suffix>`): FDL's two kinds —
/// `UNGUESSABLE` (96 random bits, 17 base62 characters) and `SHORT` (as short as is unused, at least 4) —
/// and a custom alias a team chooses. Pure: the randomness is handed in (the server reads the system's
/// CSPRNG), so every rule here is tested without it.
public enum ShortLinkSuffix {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    /// ⌈96 / log2(62)⌉: every 96-bit value fits, so all suffixes of this kind have one length.
    public static let unguessableLength = 17
    public static let unguessableBytes = 12
    public static let shortestLength = 4
    /// Long enough for any readable alias, short enough for a QR code and a log line.
    public static let aliasLimit = 64

    /// 96 random bits (`random` must hold at least ``unguessableBytes``) as 17 base62 characters.
    public static func unguessable(_ random: [UInt8]) -> String {
        precondition(random.count >= unguessableBytes, "an unguessable suffix needs 96 random bits")
        // Base 62 by long division of the 96-bit number held in three 32-bit words.
        var words: [UInt64] = (0..<3).map { word in
            random[(word * 4)..<(word * 4 + 4)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        var digits: [UInt8] = []
        for _ in 0..<unguessableLength {
            var remainder: UInt64 = 0
            for index in words.indices {
                let value = remainder << 32 | words[index]
                words[index] = value / 62
                remainder = value % 62
            }
            digits.append(alphabet[Int(remainder)])
        }
        return String(decoding: digits.reversed(), as: UTF8.self)
    }

    /// The shortest suffix no link uses yet: `attempts` random tries at each length from 4 up, so a busy
    /// domain gets longer suffixes instead of a slow search. `random` gives uniformly random numbers.
    public static func short(random: () -> UInt64, attempts: Int = 8, isTaken: (String) -> Bool) -> String {
        var length = shortestLength
        while true {
            for _ in 0..<attempts {
                var value = random()
                var characters: [UInt8] = []
                for _ in 0..<length {
                    characters.append(alphabet[Int(value % 62)])
                    value /= 62
                    if value == 0 { value = random() }
                }
                let candidate = String(decoding: characters, as: UTF8.self)
                if !isTaken(candidate) { return candidate }
            }
            length += 1
        }
    }

    /// Why an alias cannot be a short link's path; nil when it can.
    public static func aliasProblem(_ alias: String) -> String? {
        if alias.isEmpty { return "is empty" }
        if alias.utf8.count > aliasLimit { return "is \(alias.utf8.count) characters; at most \(aliasLimit)" }
        let allowed = alias.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_")
        }
        if !allowed { return "may hold only letters, digits, '-' and '_' (it is a path, typed and printed on QR codes)" }
        if alias.hasPrefix("_") { return "starts with '_': /_/ is the server's own path space on link domains" }
        if reservedAliases.contains(alias.lowercased()) {
            return "is reserved: /\(alias) is a path browsers, crawlers or Apple fetch on every domain"
        }
        return nil
    }

    /// Paths fetched on any domain for other reasons than a link.
    static let reservedAliases: Set<String> = [
        "apple-app-site-association", "well-known", "robots", "favicon", "sitemap", "humans", "security", "api", "v1",
        "index", "admin", "healthz", "readyz", "metrics",
    ]
}
