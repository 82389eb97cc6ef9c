import AASA
import Support

/// The console's form for a new short link, as a browser sends it (`POST /console/links/new`,
/// `application/x-www-form-urlencoded`). Its fields are the native API's: `domain`, `alias` (the suffix),
/// `short`, and FDL's parameters under their own names — so the form becomes the API's body and is checked
/// by exactly the code that checks the API's (the allowlist, the alias rules), and a refusal's JSON path
/// names the field to mark.
public enum ConsoleLinkForm {
    /// The FDL parameters the form offers, in its order.
    public static let parameters = ["link", "ofl", "ifl", "ipfl", "afl", "st", "sd", "si"]
    /// `token`: the link API's token or the admin token, typed into the form (never part of the link).
    public static let fields = ["domain", "alias", "short", "token"] + parameters
    /// A form is a few URLs; far more is not a person typing.
    public static let bodyLimit = 16 * 1024

    /// The fields a body gives (empty ones left out); a problem for a field the form does not have, one
    /// given twice, or a body that is not form-encoded text.
    public static func values(_ body: [UInt8]) -> Result<[String: String], ShortLinkAPI.Problem> {
        func refused(_ detail: String) -> Result<[String: String], ShortLinkAPI.Problem> {
            .failure(ShortLinkAPI.Problem(status: 400, title: "Invalid form", detail: detail))
        }
        guard body.count <= bodyLimit else { return refused("the form is over \(bodyLimit) bytes") }
        guard let text = String(validating: body, as: UTF8.self) else { return refused("the form is not UTF-8 text") }
        var values: [String: String] = [:]
        var seen: Set<String> = []
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard fields.contains(name) else { return refused("the form has no field '\(name)'") }
            guard seen.insert(name).inserted else { return refused("the field '\(name)' is given twice") }
            let value = parts.count > 1 ? decode(parts[1]).trimmingWhitespace() : ""
            if !value.isEmpty { values[name] = value }
        }
        return .success(values)
    }

    /// `+` is a space in a form; `%2B` a plus.
    private static func decode(_ raw: Substring) -> String { percentDecode(String(raw.map { $0 == "+" ? " " : $0 })) }

    /// The native API's body (``NativeLinkRequest``) the fields make: a checked box is `"short": true`; the
    /// token is not part of it.
    public static func nativeBody(_ values: [String: String]) -> [UInt8] {
        var members: [(String, JSONOutput)] = [
            ("domain", .string(values["domain"] ?? "")),
            ("parameters", .object(parameters.compactMap { name in values[name].map { (name, .string($0)) } })),
        ]
        if let alias = values["alias"] { members.append(("suffix", .string(alias))) }
        if values["short"] != nil { members.append(("short", .bool(true))) }
        return Array(JSONWriter.string(.object(members)).utf8)
    }

    /// The field a refusal's JSON path names (`$.parameters.ofl` → `ofl`, `$.suffix` → `alias`).
    public static func field(of path: String?) -> String? {
        guard let path else { return nil }
        if path.hasPrefix("$.parameters.") { return parameters.first { "$.parameters.\($0)" == path } }
        switch path {
        case "$.domain": return "domain"
        case "$.suffix": return "alias"
        case "$.short": return "short"
        case "$.token": return "token"
        case "$.parameters": return "link"
        default: return nil
        }
    }
}
