import ConsolePages
import Links

/// `/console/link/<domain>/<suffix>?days=N`: which stored link's console page a request asks for (days 1
/// to 365, 30 when not given or not a number in range); `/console/links/new`, the form for a new one.
enum ConsoleLinkPage {
    static let prefix = "/console/link/"

    static func call(path: String, query: String) -> ShortLinkAPI.Call? {
        if path == LinkFormPage.path { return .consoleForm }
        guard path.hasPrefix(prefix) else { return nil }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        let days = Int(HTML.query(query)["days"] ?? "").flatMap { (1...365).contains($0) ? $0 : nil } ?? 30
        return .consolePage(domain: HTML.formValue(parts[0]).lowercased(), suffix: HTML.formValue(parts[1]), days: days)
    }
}
