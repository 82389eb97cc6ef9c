/// Compares two JSON documents as data, not bytes: key order and whitespace do not matter, array order
/// does. Used where a live document must equal what a config generates, or a CDN copy its origin.
public enum JSONDifference {
    /// The first difference, as `$.applinks.details[0].components[2]: expected {"/":"/a/*"}, found nothing`,
    /// or nil when the documents are equal. `expected` and `found` label the two sides.
    public static func first(_ expected: JSONNode, _ found: JSONNode) -> String? {
        compare(expected, found, path: .root)
    }

    /// Both sides as bytes; a side that is not JSON is itself the difference.
    public static func first(expected: [UInt8], found: [UInt8]) -> String? {
        // The same bytes are the same document, even when neither side parses.
        if expected == found { return nil }
        guard let left = JSONParser.parse(expected).root else { return "the expected document is not valid JSON" }
        guard let right = JSONParser.parse(found).root else { return "the document found is not valid JSON" }
        return first(left, right)
    }

    private static func compare(_ expected: JSONNode, _ found: JSONNode, path: JSONPath) -> String? {
        switch (expected.value, found.value) {
        case (.object(let left), .object(let right)):
            for member in left {
                guard let other = right.first(where: { $0.key == member.key }) else {
                    return "\(path.key(member.key).description): expected \(excerpt(member.value)), found nothing"
                }
                if let difference = compare(member.value, other.value, path: path.key(member.key)) { return difference }
            }
            if let extra = right.first(where: { member in !left.contains { $0.key == member.key } }) {
                return "\(path.key(extra.key).description): not expected, found \(excerpt(extra.value))"
            }
            return nil
        case (.array(let left), .array(let right)):
            for index in 0..<min(left.count, right.count) {
                if let difference = compare(left[index], right[index], path: path.index(index)) { return difference }
            }
            if left.count > right.count {
                return
                    "\(path.index(right.count).description): expected \(excerpt(left[right.count])), found nothing (\(right.count) of \(left.count) items)"
            }
            if right.count > left.count {
                return
                    "\(path.index(left.count).description): not expected, found \(excerpt(right[left.count])) (\(right.count) items, \(left.count) expected)"
            }
            return nil
        case (.string(let left), .string(let right)):
            return left == right ? nil : "\(path.description): expected \(excerpt(expected)), found \(excerpt(found))"
        case (.number(let left), .number(let right)):
            return Double(left) == Double(right) ? nil : "\(path.description): expected \(left), found \(right)"
        case (.bool(let left), .bool(let right)):
            return left == right ? nil : "\(path.description): expected \(left), found \(right)"
        case (.null, .null):
            return nil
        default:
            return "\(path.description): expected \(excerpt(expected)), found \(excerpt(found))"
        }
    }

    /// Compact JSON of a value, at most 60 characters.
    static func excerpt(_ node: JSONNode) -> String {
        let text = JSONWriter.string(JSONOutput(node))
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }
}
