internal import Glibc

/// A failed system call: which call and why, printed as "bind: Address already in use (errno 98)".
public struct SystemError: Error, Sendable, CustomStringConvertible, Equatable {
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(reason) (errno \(code))" }
    public var reason: String { String(cString: strerror(code)) }

    /// The conditions callers tell apart, so no caller needs the C constants.
    public var isAddressInUse: Bool { code == EADDRINUSE }
    public var isPermissionDenied: Bool { code == EACCES || code == EPERM }
    public var isAddressUnavailable: Bool { code == EADDRNOTAVAIL || code == EAFNOSUPPORT }
    public var isNoSuchFile: Bool { code == ENOENT }
}

/// The one place that makes system calls. Every call goes through ``retrying(_:)`` (EINTR is retried,
/// errno is read at once, before anything else can change it) and failures become ``SystemError``s.
public enum Posix {
    /// Runs `body` until it does not fail with EINTR; returns its result and, when negative, errno.
    @inline(__always)
    static func retrying<Result: FixedWidthInteger>(_ body: () -> Result) -> (result: Result, errno: Int32) {
        while true {
            let result = body()
            if result >= 0 { return (result, 0) }
            let code = errno
            if code != EINTR { return (result, code) }
        }
    }

    /// ``retrying(_:)``, throwing on failure.
    @inline(__always)
    @discardableResult
    static func check<Result: FixedWidthInteger>(_ call: String, _ body: () -> Result) throws(SystemError) -> Result {
        let (result, code) = retrying(body)
        if result < 0 { throw SystemError(call: call, code: code) }
        return result
    }
}
