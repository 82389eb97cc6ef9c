import Synchronization

/// A document's gzip form, made once by whichever needs it first: the server's pass after it publishes a
/// snapshot, a request that asks for gzip before that pass reaches the document, or the compiled-sites
/// snapshot's writer. No load makes it: an identity answer needs none of it, and compressing a 101 KB
/// hosted document was 7 M of the 57 M instructions from exec to a first start's first answer.
///
/// The compression runs outside the lock, so an event loop never waits for another thread's: two callers
/// at once both compress (the same bytes) and the first to finish is kept.
public final class GzipForm: Sendable {
    private enum State {
        /// The document to compress, let go once its form is made (a load may have shared an equal one).
        case pending(ImmutableBytes)
        /// Empty when compressing does not pay.
        case made(ImmutableBytes)
    }

    private let compress: @Sendable ([UInt8]) -> [UInt8]
    private let state: Mutex<State>

    /// A form made before (by an earlier check, kept by the snapshot); empty when compressing does not pay.
    public init(made bytes: ImmutableBytes) {
        compress = { _ in [] }
        state = Mutex(.made(bytes))
    }

    /// The form of `source`, made when first asked for: `compress` gives it, or nothing when it does not pay.
    public init(of source: ImmutableBytes, compress: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.compress = compress
        state = Mutex(.pending(source))
    }

    public var isMade: Bool {
        state.withLock {
            if case .made = $0 { return true }
            return false
        }
    }

    /// The gzip form (empty: compressing does not pay), made now if nobody has made it yet.
    public func bytes() -> ImmutableBytes {
        let source: ImmutableBytes
        switch state.withLock({ $0 }) {
        case .made(let bytes): return bytes
        case .pending(let document): source = document
        }
        let compressed = compress(source.array)
        let bytes = compressed.isEmpty ? ImmutableBytes.empty : ImmutableBytes.copy(compressed)
        return state.withLock { state in
            if case .made(let first) = state { return first }
            state = .made(bytes)
            return bytes
        }
    }
}
