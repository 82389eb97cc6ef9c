/// A value and its origin.
public struct Located<Value: Sendable>: Sendable {
    public var value: Value
    public var origin: Provenance

    public init(_ value: Value, _ origin: Provenance = .none) {
        self.value = value
        self.origin = origin
    }
}

extension Located: Equatable where Value: Equatable {
    public static func == (lhs: Located, rhs: Located) -> Bool { lhs.value == rhs.value }
}
