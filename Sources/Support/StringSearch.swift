/// Byte-level text helpers the pure core needs without Foundation, written once.
extension String {
    /// Plain substring replacement; the pure target does not import Foundation.
    public func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}

extension String {
    /// Substring test on UTF-8 bytes: the generic `contains(_:)` goes through the string-processing
    /// machinery and took ~20% of loading a 10,000-host config before this.
    /// `withUTF8` reads a small string's bytes where they are: `utf8.withContiguousStorageIfAvailable` cost
    /// four times as much on the short patterns of a site's rules.
    @inlinable
    public func containsBytes(_ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        if count == 0 { return true }
        var text = self
        return text.withUTF8 { haystack -> Bool in
            guard haystack.count >= count else { return false }
            let first = needle.utf8Start[0]
            search: for start in 0...(haystack.count - count) where haystack[start] == first {
                for offset in 1..<count where haystack[start + offset] != needle.utf8Start[offset] { continue search }
                return true
            }
            return false
        }
    }
}
