import Synchronization

/// Background work that runs once and ends (the compiled-sites snapshot written after a load, the link
/// store opened and first read) says so here, and the supervisor gives back the pages it faulted in at its next tick (``MemoryReturn``)
/// instead of ten quiet seconds later.
enum OneOffWork {
    private static let ended = Atomic<Int>(0)

    static func end() { ended.add(1, ordering: .relaxed) }

    /// How many have ended since the process started.
    static var endings: Int { ended.load(ordering: .relaxed) }
}
