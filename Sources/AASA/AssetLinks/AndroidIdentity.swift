import Support

/// The two things that name an Android app in a statement: its package name and its signing
/// certificates' SHA-256 fingerprints, checked as Google's Digital Asset Links parser checks them.
public enum AndroidIdentity {
    /// What is wrong with a fingerprint, and the canonical form when one can be derived.
    public struct FingerprintCheck: Sendable, Equatable {
        /// `14:6D:E9:…`: 32 upper-case hex pairs joined by ':'; nil when the text is not a SHA-256 digest.
        public var canonical: String?
        /// Nil when the text is already canonical.
        public var problem: String?
    }

    /// Google's parser accepts only the canonical form: lower case or missing colons reject the whole
    /// statement list ("malformed cert"), so each is reported with the exact text to write.
    public static func checkFingerprint(_ text: String) -> FingerprintCheck {
        let trimmed = text.trimmingSpacesAndTabs()
        let digits = trimmed.utf8.filter { $0 != UInt8(ascii: ":") }
        guard !digits.isEmpty, digits.allSatisfy(ASCII.isHexDigit) else {
            // REPLACE_WITH_…, YOUR_…, TODO: a template's placeholder published as it was.
            let placeholder = digits.contains { $0 == UInt8(ascii: "_") || ASCII.isLetter($0) && !ASCII.isHexDigit($0) }
            return FingerprintCheck(
                canonical: nil,
                problem:
                    "\"\(text)\" is \(placeholder ? "a placeholder, " : "")not a SHA-256 fingerprint (32 hex pairs such as 14:6D:E9:…); get it with "
                    + "`keytool -list -v -keystore KEYSTORE` or from Play Console → App integrity → App signing"
            )
        }
        if digits.count == 40 {
            return FingerprintCheck(
                canonical: nil,
                problem: "\"\(text)\" is a SHA-1 fingerprint (20 bytes); asset links need the SHA-256 one (32 bytes), "
                    + "shown next to it by `keytool -list -v` and in Play Console → App integrity"
            )
        }
        guard digits.count == 64 else {
            return FingerprintCheck(
                canonical: nil,
                problem: "\"\(text)\" has \(digits.count / 2) bytes; a SHA-256 fingerprint has 32"
            )
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var canonical: [UInt8] = []
        canonical.reserveCapacity(95)
        for (index, digit) in digits.enumerated() {
            if index > 0 && index % 2 == 0 { canonical.append(UInt8(ascii: ":")) }
            canonical.append(hex[Int(ASCII.hexValue(digit) ?? 0)])
        }
        let canonicalText = String(decoding: canonical, as: UTF8.self)
        if trimmed == canonicalText { return FingerprintCheck(canonical: canonicalText, problem: nil) }
        var what: [String] = []
        if trimmed.utf8.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) { what.append("lower-case hex") }
        if trimmed.uppercased() != canonicalText { what.append("missing or misplaced colons") }
        if trimmed != text { what.append("surrounding spaces") }
        return FingerprintCheck(
            canonical: canonicalText,
            problem: "\"\(text)\" has \(what.isEmpty ? "a non-canonical form" : what.joined(separator: " and ")), which Google's "
                + "verifier rejects (the whole file then counts as empty); write \"\(canonicalText)\""
        )
    }

    /// Android's rule: at least two '.'-separated segments, each a letter followed by letters, digits
    /// or '_'. Nil when valid, else why not.
    public static func packageNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "the package name is empty" }
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        if segments.count < 2 {
            return "\"\(name)\" is not a package name: it needs at least two segments, e.g. com.example.app"
        }
        for segment in segments {
            guard let first = segment.utf8.first else {
                return "\"\(name)\" has an empty segment (a leading, trailing or double '.')"
            }
            guard ASCII.isLetter(first) else {
                return "\"\(name)\": each segment must start with a letter (\"\(segment)\" does not)"
            }
            if let bad = segment.unicodeScalars.first(where: {
                !($0.isASCII && (ASCII.isLetter(UInt8($0.value)) || ASCII.isDigit(UInt8($0.value)) || $0 == "_"))
            }) {
                return "\"\(name)\": '\(bad)' is not allowed; package names use letters, digits and '_' between the dots"
            }
        }
        return nil
    }

}
