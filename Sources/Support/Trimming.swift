/// Trimming without Foundation, in the three senses the code needs: HTTP's optional whitespace (spaces
/// and tabs), any whitespace, and a set of characters.
extension StringProtocol {
    /// Without leading and trailing spaces and tabs (RFC 9110's OWS around field values).
    public func trimmingSpacesAndTabs() -> String {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }

    /// Without leading and trailing whitespace of any kind (newlines included).
    public func trimmingWhitespace() -> String {
        var text = self[...]
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }

    /// Without leading and trailing characters from `set`.
    public func trimming(_ set: String) -> String {
        let characters = Set(set)
        var text = self[...]
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

extension ArraySlice<UInt8> {
    /// Without leading and trailing ASCII whitespace (space, tab, CR, LF).
    public func trimmingASCIIWhitespace() -> ArraySlice<UInt8> {
        var bytes = self
        while let first = bytes.first, ASCII.isWhitespace(first) { bytes.removeFirst() }
        while let last = bytes.last, ASCII.isWhitespace(last) { bytes.removeLast() }
        return bytes
    }
}
