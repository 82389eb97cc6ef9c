/// Where a model value came from: its position in the source and its JSON path.
///
/// Generated documents carry the origin of the *config* value they were made from, so a finding
/// about a generated rule points at the line the user wrote.
public struct Provenance: Sendable, Hashable {
    public var location: SourceLocation?
    public var path: JSONPath

    public init(_ location: SourceLocation?, _ path: JSONPath) {
        self.location = location
        self.path = path
    }

    public static let none = Provenance(nil, .root)
}
