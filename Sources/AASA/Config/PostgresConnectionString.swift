/// What the config needs to know of libpq's connection strings without parsing them as libpq does:
/// whether one carries a password (`password=…` in the keyword form, `user:secret@` or `?password=` in a
/// URI), which the config refuses so that it never sits in a file under review or in a log line.
public enum PostgresConnectionString {
    public static func hasPassword(_ text: String) -> Bool {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") {
            let afterScheme = lowered[lowered.index(after: lowered.firstIndex(of: "/")!)...].dropFirst()
            let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
            guard let query = lowered.firstIndex(of: "?") else { return false }
            return lowered[lowered.index(after: query)...].split(separator: "&").contains { $0.hasPrefix("password=") }
        }
        // Keyword form: `keyword = value` pairs separated by spaces; values may be quoted.
        var index = lowered.startIndex
        while index < lowered.endIndex {
            while index < lowered.endIndex, lowered[index] == " " || lowered[index] == "\t" || lowered[index] == "\n" {
                index = lowered.index(after: index)
            }
            let keywordStart = index
            while index < lowered.endIndex, lowered[index] != "=", lowered[index] != " ", lowered[index] != "\t" {
                index = lowered.index(after: index)
            }
            if lowered[keywordStart..<index] == "password" { return true }
            while index < lowered.endIndex, lowered[index] == " " || lowered[index] == "\t" || lowered[index] == "=" {
                index = lowered.index(after: index)
            }
            if index < lowered.endIndex, lowered[index] == "'" {
                index = lowered.index(after: index)
                while index < lowered.endIndex, lowered[index] != "'" {
                    if lowered[index] == "\\" { index = lowered.index(after: index) }
                    if index < lowered.endIndex { index = lowered.index(after: index) }
                }
                if index < lowered.endIndex { index = lowered.index(after: index) }
            } else {
                while index < lowered.endIndex, lowered[index] != " ", lowered[index] != "\t", lowered[index] != "\n" {
                    index = lowered.index(after: index)
                }
            }
        }
        return false
    }
}
