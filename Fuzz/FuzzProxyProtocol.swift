import HTTP1

/// The PROXY v1/v2 parser: never reads outside the buffer, a complete header lies inside it, and a
/// prefix of a complete header is never reported as complete with another length.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let result = bytes.withUnsafeBufferPointer { ProxyProtocol.parse($0) }
    if case .complete(_, let length) = result {
        precondition(length > 0 && length <= bytes.count, "header length outside the buffer")
        // More bytes after a complete header do not change it.
        let longer = (bytes + [0x47, 0x45, 0x54]).withUnsafeBufferPointer { ProxyProtocol.parse($0) }
        precondition(longer == result, "trailing bytes changed a complete header")
    }
    return 0
}
