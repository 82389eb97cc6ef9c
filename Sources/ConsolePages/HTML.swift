import Support

/// Text that came from a config or a request (a host name, a User-Agent, a document) goes into a page
/// only through ``escape(_:)``: markup in it is shown as text, never run.
public enum HTML {
    public static func escape(_ text: String) -> String { Markup.escape(text) }

    /// A query parameter value as a browser's GET form sends it: `+` for space, `%XX` bytes (UTF-8).
    public static func formValue(_ raw: Substring) -> String {
        var bytes: [UInt8] = []
        var index = raw.utf8.startIndex
        let utf8 = raw.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex),
                high < utf8.endIndex, let low = utf8.index(high, offsetBy: 1, limitedBy: utf8.endIndex), low < utf8.endIndex,
                let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = low
            } else {
                bytes.append(byte)
            }
            index = utf8.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `q=shop&page=2` → ["q": "shop", "page": "2"] (the last of a repeated name wins).
    public static func query(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            result[formValue(parts[0])] = parts.count > 1 ? formValue(parts[1]) : ""
        }
        return result
    }

    /// A path segment or query value, percent-encoded for a link.
    public static func component(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }
}
