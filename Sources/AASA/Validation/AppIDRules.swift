import Support

extension AASAValidator {
    // MARK: - App IDs

    /// The Team ID of the app ID `aasa-server dev` writes into a starter config when given no `--app`.
    public static let placeholderTeamID = "REPLACEME0"

    public static func validateAppID(_ app: Located<String>, report: Reporter) {
        if isWellFormedAppID(app.value) {
            // Well-formed, and still not an app: a starter config must never pass CI as it is.
            if app.value.utf8.starts(with: placeholderTeamID.utf8) {
                report(
                    .error,
                    "appid.placeholder",
                    "\"\(app.value)\" is the placeholder `aasa-server dev` writes, not your app; replace it with your "
                        + "TEAMID.bundle.id (Team ID from the Apple Developer account's Membership page, bundle ID from Xcode's "
                        + "Signing & Capabilities), or run `aasa-server dev --app TEAMID.BUNDLE`, which updates the starter config",
                    app.origin
                )
            }
            return
        }
        explainAppID(app, report: report)
    }

    /// The detailed checks, each with its own message (run when the fast path declines).
    static func explainAppID(_ app: Located<String>, report: Reporter) {
        let id = app.value
        let scalars = Array(id.unicodeScalars)
        func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
            ("A"..."Z").contains(s) || ("a"..."z").contains(s) || ("0"..."9").contains(s)
        }
        let fix = "an app ID is <10-character Team ID>.<bundle ID>, e.g. \"ABCDE12345.com.example.app\""
        if id.containsBytes("$(") || id.containsBytes("DEVELOPMENT_TEAM") || id.containsBytes("PRODUCT_BUNDLE_IDENTIFIER") {
            report(
                .error,
                "appid.format",
                "\"\(id)\" is an unexpanded Xcode build-setting placeholder, not an app ID; \(fix)",
                app.origin
            )
            return
        }
        if let space = scalars.firstIndex(where: { $0 == " " || $0 == "\t" }) {
            report(
                .error,
                "appid.format",
                "\"\(id)\" contains whitespace at character \(space + 1); remove it — \(fix)",
                app.origin
            )
            return
        }
        guard let dot = scalars.firstIndex(of: ".") else {
            report(.error, "appid.format", "\"\(id)\" has no Team ID prefix; \(fix)", app.origin)
            return
        }
        let prefix = scalars[..<dot]
        let bundle = scalars[(dot + 1)...]
        if prefix.count != 10 || !prefix.allSatisfy(isAlphanumeric) {
            let looksLikeBundle = ["com", "org", "net", "io", "de", "uk", "co", "app"].contains(
                String(String.UnicodeScalarView(prefix)).lowercased()
            )
            let detail =
                looksLikeBundle
                ? "it starts with a bundle ID and lacks the Team ID prefix"
                : "its prefix \"\(String(String.UnicodeScalarView(prefix)))\" has \(prefix.count) characters"
                    + (prefix.allSatisfy(isAlphanumeric) ? "" : " and non-alphanumeric ones") + " instead of 10 letters/digits"
            report(.error, "appid.format", "\"\(id)\": \(detail); \(fix)", app.origin)
            return
        }
        if bundle.isEmpty || !bundle.allSatisfy({ isAlphanumeric($0) || $0 == "-" || $0 == "." }) {
            let bad = bundle.first { !(isAlphanumeric($0) || $0 == "-" || $0 == ".") }
            report(
                .error,
                "appid.format",
                "\"\(id)\": the bundle ID "
                    + (bundle.isEmpty ? "is empty" : "contains \"\(bad.map { String($0) } ?? "")\"")
                    + "; bundle IDs use only A–Z, a–z, 0–9, '-' and '.'",
                app.origin
            )
            return
        }
        if bundle.first == "." || bundle.last == "." || id.containsBytes("..") {
            report(.error, "appid.format", "\"\(id)\": the bundle ID has an empty part (a leading, trailing or double '.')", app.origin)
            return
        }
        if prefix.contains(where: { ("a"..."z").contains($0) }) {
            report(
                .warning,
                "appid.prefix-lowercase",
                "\"\(id)\": Team ID prefixes are upper-case letters and digits; check the prefix against the "
                    + "developer portal (a wrong prefix silently breaks the association)",
                app.origin
            )
        }
    }

    /// The common case in one pass over the bytes: an upper-case 10-character prefix, '.', and a bundle
    /// ID of letters, digits, '-' and non-empty '.'-separated parts. Anything else gets the detailed checks.
    static func isWellFormedAppID(_ id: String) -> Bool {
        // Checked for every app ID of every document: over contiguous bytes when the string has them.
        if let result = id.utf8.withContiguousStorageIfAvailable({ isWellFormedAppID(bytes: $0) }) { return result }
        return isWellFormedAppID(bytes: Array(id.utf8))
    }

    private static func isWellFormedAppID(bytes: some Collection<UInt8>) -> Bool {
        var index = 0
        var previousWasDot = false
        for byte in bytes {
            if index < 10 {
                guard (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                else { return false }
            } else if index == 10 {
                guard byte == UInt8(ascii: ".") else { return false }
                previousWasDot = true
            } else {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"):
                    previousWasDot = false
                case UInt8(ascii: "."):
                    if previousWasDot { return false }
                    previousWasDot = true
                default:
                    return false
                }
            }
            index += 1
        }
        return index > 11 && !previousWasDot
    }
}
