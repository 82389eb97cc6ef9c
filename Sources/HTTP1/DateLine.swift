/// `Date: <IMF-fixdate>\r\n` (``HTTPDate/line(unixSeconds:)``) held in place: every queued response
/// carries the line of the second it was answered in, and as an array that was a reference counted once
/// when queued, once when written and once when freed — atomic operations a request, where these 37 bytes
/// are a copy.
public struct DateLine: Sendable, Equatable {
    /// An IMF-fixdate is fixed-length for every year from 1970 to 9999.
    public static let byteCount = 37
    /// The latest second with a four-digit year: a clock past it is stated as this second, never as a
    /// line of another length.
    static let lastSecond = 253_402_300_799

    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)

    public init(unixSeconds: Int) {
        let line = HTTPDate.line(unixSeconds: min(max(unixSeconds, 0), Self.lastSecond))
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: line) }
    }

    /// The line's bytes, valid only inside `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        Swift.withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[0..<Self.byteCount])) }
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The same line: the same five words.
    public static func == (left: DateLine, right: DateLine) -> Bool {
        left.storage.0 == right.storage.0 && left.storage.1 == right.storage.1 && left.storage.2 == right.storage.2
            && left.storage.3 == right.storage.3 && left.storage.4 == right.storage.4
    }
}
