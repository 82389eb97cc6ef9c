import Support

/// Builds JSONPath-style addresses: `$.applinks.details[0].components[1]["/"]`.
///
/// Every decoded value keeps its path, but few paths are ever shown, so a path is a chain of
/// components and its text is written only when asked for.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    private final class Step: Sendable {
        let parent: Step?
        let key: String?
        let index: Int

        init(parent: Step?, key: String?, index: Int) {
            self.parent = parent
            self.key = key
            self.index = index
        }
    }

    private let last: Step?

    public static let root = JSONPath(last: nil)

    private init(last: Step?) { self.last = last }

    public func key(_ key: String) -> JSONPath { JSONPath(last: Step(parent: last, key: key, index: 0)) }

    public func index(_ index: Int) -> JSONPath { JSONPath(last: Step(parent: last, key: nil, index: index)) }

    /// `$[index]`, where each site of an included file lives. Files hold a few hundred sites each, so the
    /// first few thousand of these are made once and shared by every file: a million sites then do not
    /// each keep their own (paths compare by their keys and indexes, so sharing changes no comparison).
    public static func rootIndex(_ index: Int) -> JSONPath {
        index < sharedRootIndexes.count ? sharedRootIndexes[index] : root.index(index)
    }

    private static let sharedRootIndexes = (0..<4096).map { root.index($0) }

    public var description: String {
        var steps: [Step] = []
        var step = last
        while let current = step {
            steps.append(current)
            step = current.parent
        }
        var text = "$"
        for step in steps.reversed() {
            if let key = step.key { Self.append(key: key, to: &text) } else { text += "[\(step.index)]" }
        }
        return text
    }

    private static func append(key: String, to text: inout String) {
        var isIdentifier = !key.isEmpty
        var needsEscape = false
        var isFirst = true
        for byte in key.utf8 {
            defer { isFirst = false }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): break
            case UInt8(ascii: "0")...UInt8(ascii: "9"): if isFirst { isIdentifier = false }
            case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                isIdentifier = false
                needsEscape = true
            default: isIdentifier = false
            }
        }
        if isIdentifier {
            text += "." + key
            return
        }
        let escaped = needsEscape ? key.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") : key
        text += "[\"" + escaped + "\"]"
    }

    /// Step by step: the same text exactly when the same steps, since a key's text (`.key` or `["key"]`,
    /// escaped) and an index's (`[n]`) can never be read as each other. Comparing the two texts instead
    /// wrote both for every comparison — 800 instructions for a site's path in a snapshot check.
    public static func == (left: JSONPath, right: JSONPath) -> Bool {
        var a = left.last
        var b = right.last
        while a !== b {
            guard let x = a, let y = b, x.key == y.key, x.key != nil || x.index == y.index else { return false }
            a = x.parent
            b = y.parent
        }
        return true
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
