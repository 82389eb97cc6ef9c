/// A web target's `site` and an `include` URL, read as Google's Digital Asset Links parser reads them:
/// the scheme is case-insensitive; login information, a port outside 1–65535 and (for a site) any path —
/// even a lone `/` — make the statement invalid, and the verifier skips it.
struct AssetURL: Equatable {
    /// Lower case.
    var scheme: String
    var host: String
    var port: Int?
    /// Everything from the first `/`, `?` or `#` after the authority; empty when there is none.
    var rest: String
    /// The scheme as written, when not in lower case (accepted; worth a warning).
    var schemeSpelling: String?

    /// The URL's parts, or why Google's parser refuses it.
    static func parse(_ text: String) -> Result<AssetURL, AssetURLProblem> {
        guard let separator = text.firstRange(of: "://") else {
            return .failure(AssetURLProblem("\"\(text)\" is not a URL: write scheme://host, e.g. https://example.com"))
        }
        let written = String(text[..<separator.lowerBound])
        let scheme = written.lowercased()
        guard scheme == "https" || scheme == "http" else {
            return .failure(AssetURLProblem("\"\(text)\": the scheme must be https (or http), not \"\(written)\""))
        }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let rest = String(afterScheme[authorityEnd...])
        if authority.contains("@") {
            return .failure(
                AssetURLProblem(
                    "\"\(text)\" carries login information (user@ before the host); the verifier refuses such a URL — remove it"
                )
            )
        }
        var host = Substring(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            guard let number = Int(digits), digits.allSatisfy(\.isASCII), (1...65_535).contains(number) else {
                return .failure(AssetURLProblem("\"\(text)\": the port \"\(digits)\" is not a number from 1 to 65535"))
            }
            port = number
        }
        guard !host.isEmpty else { return .failure(AssetURLProblem("\"\(text)\" has no host")) }
        if case .failure(let error) = HostPattern.parse(String(host)) { return .failure(AssetURLProblem("\"\(text)\": \(error.message)")) }
        if host.hasPrefix("*.") { return .failure(AssetURLProblem("\"\(text)\": a wildcard is not a host here")) }
        return .success(
            AssetURL(scheme: scheme, host: String(host), port: port, rest: rest, schemeSpelling: written == scheme ? nil : written)
        )
    }
}

struct AssetURLProblem: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}
