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
    @inlinable
    public func containsBytes(_ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        var text = self
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { haystack -> Bool in
            guard haystack.count >= count else { return false }
            if count == 0 { return true }
            search: for start in 0...(haystack.count - count) {
                for offset in 0..<count where haystack[start + offset] != needle.utf8Start[offset] { continue search }
                return true
            }
            return false
        } ?? false
    }
}
