/// Text placed in HTML or XML: the five characters markup gives meaning to become entities, so text
/// from a config, a request or a server (a host name, a User-Agent, a body) is shown, never parsed.
/// Control characters XML 1.0 forbids (all but tab, LF and CR) become `?`.
public enum Markup {
    public static func escape(_ text: String) -> String {
        // Most text has nothing to escape: one pass over the bytes, and the string itself comes back.
        if !text.utf8.contains(where: { byte in
            byte < 0x20 || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
        }) {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default: if scalar.value < 0x20 { out += "?" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
