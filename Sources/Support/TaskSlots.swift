/// One slot per task, each written by exactly one task and read only after every task has finished
/// (a join or a parallel-for's return orders the writes before the reads): how concurrent work hands
/// back results in order without a lock per write.
public final class TaskSlots<Element: Sendable>: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Element?>

    public init(count: Int) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil)
    }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    public var count: Int { storage.count }

    public subscript(index: Int) -> Element? {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    /// The filled slots, in order.
    public func filled() -> [Element] { storage.compactMap { $0 } }
}
