/// One slot per task, each written by exactly one task and read only after every task has finished
/// (a join or a parallel-for's return orders the writes before the reads): how concurrent work hands
/// back results in order without a lock per write.
///
/// Inlinable, so callers in other modules get a version specialized for their element type: a million
/// sites' builds go through the subscript.
public final class TaskSlots<Element: Sendable>: @unchecked Sendable {
    @usableFromInline let storage: UnsafeMutableBufferPointer<Element?>

    @inlinable
    public init(count: Int) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil)
    }

    @inlinable
    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    @inlinable
    public var count: Int { storage.count }

    @inlinable
    public subscript(index: Int) -> Element? {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    /// The filled slots, in order.
    @inlinable
    public func filled() -> [Element] { storage.compactMap { $0 } }
}
