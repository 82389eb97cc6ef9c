/// A place in a source file: byte offset plus the 1-based line and column a person sees in an editor.
///
/// Columns count Unicode scalars, not bytes, so a position after "é" matches what editors and
/// Python's `json` module report.
///
/// Stored in 32 bits each (inputs are at most 256 MB): every host, component and rule of a loaded config
/// carries one, and at a million hosts the 24 bytes of three `Int`s were 16 bytes a host and a site more.
public struct SourceLocation: Sendable, Hashable, Comparable {
    private var storedOffset: UInt32
    private var storedLine: UInt32
    private var storedColumn: UInt32

    public var offset: Int {
        get { Int(storedOffset) }
        set { storedOffset = UInt32(clamping: newValue) }
    }
    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = UInt32(clamping: newValue) }
    }
    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = UInt32(clamping: newValue) }
    }

    public init(offset: Int, line: Int, column: Int) {
        storedOffset = UInt32(clamping: offset)
        storedLine = UInt32(clamping: line)
        storedColumn = UInt32(clamping: column)
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool { lhs.offset < rhs.offset }
}

/// A parsed JSON value that remembers where it came from, so every finding can name line:column.
public struct JSONNode: Sendable {
    public enum Value: Sendable {
        case null
        case bool(Bool)
        /// The number's source text is kept: AASA files have no numbers, and an exact echo is what a
        /// verbatim document needs.
        case number(String)
        case string(String)
        case array([JSONNode])
        case object([JSONMember])
    }

    public var value: Value
    public var location: SourceLocation

    public init(_ value: Value, at location: SourceLocation) {
        self.value = value
        self.location = location
    }

    /// The JSON type name used in messages ("expected a string, found an array").
    public var typeName: String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public var stringValue: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = value { return flag }
        return nil
    }

    public var arrayValue: [JSONNode]? {
        if case .array(let items) = value { return items }
        return nil
    }

    public var objectValue: [JSONMember]? {
        if case .object(let members) = value { return members }
        return nil
    }

    /// The first member named `key` (objects keep their members in source order).
    public subscript(key: String) -> JSONNode? {
        objectValue?.first { $0.key == key }?.value
    }
}

/// One `"key": value` pair of an object, with the key's own position (unknown-key findings point at it).
public struct JSONMember: Sendable {
    public var key: String
    public var keyLocation: SourceLocation
    public var value: JSONNode

    public init(key: String, keyLocation: SourceLocation, value: JSONNode) {
        self.key = key
        self.keyLocation = keyLocation
        self.value = value
    }
}

extension JSONNode {
    /// For a document that is one JSON string holding the real document (`"{\"applinks\": …}"`, as a
    /// template or a double encoding leaves it): the fix, to add to "found a string".
    public var wrappedDocumentHint: String {
        guard let text = stringValue else { return "" }
        let opening = text.first { $0 != " " && $0 != "\n" && $0 != "\r" && $0 != "\t" }
        guard opening == "{" || opening == "[" else { return "" }
        return "; the file is one JSON string holding the document: remove the quotes around the document (and the "
            + "backslashes before its inner quotes)"
    }
}
