import HTTP1

/// The body discarder (chunked framing): whole, and split in two, must agree; `done` must point inside
/// the buffer; the limit must hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    var whole = BodyDiscarder(.chunked, limit: 4096)
    let expected = bytes.withUnsafeBufferPointer { whole.consume($0, from: 0) }
    if case .done(let end) = expected { precondition(end >= 0 && end <= bytes.count) }
    guard let first = bytes.first, bytes.count > 1 else { return 0 }
    let split = 1 + Int(first) % (bytes.count - 1)
    var pieces = BodyDiscarder(.chunked, limit: 4096)
    var outcome = bytes[0..<split].withUnsafeBufferPointer { pieces.consume($0, from: 0) }
    if outcome == .needMore {
        outcome = bytes[split...].withUnsafeBufferPointer { pieces.consume($0, from: 0) }
        if case .done(let end) = outcome { outcome = .done(end + split) }
    } else if case .done = outcome {
        return 0
    }
    switch (expected, outcome) {
    case (.done(let a), .done(let b)): precondition(a == b, "a split moved the end of the body")
    case (.failed(let a), .failed(let b)): precondition(a.status == b.status, "a split changed the error")
    case (.needMore, .needMore): break
    default: preconditionFailure("a split changed the outcome: \(expected) vs \(outcome)")
    }
    return 0
}
