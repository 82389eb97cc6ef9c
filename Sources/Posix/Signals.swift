internal import CLinux
internal import Glibc

/// The signals the server handles, by name, so no caller needs the C constants.
public enum Signal: Int32, Sendable, CaseIterable {
    case hangup = 1
    case interrupt = 2
    case terminate = 15

    var number: Int32 {
        switch self {
        case .hangup: return SIGHUP
        case .interrupt: return SIGINT
        case .terminate: return SIGTERM
        }
    }

    init?(number: Int32) {
        guard let match = Signal.allCases.first(where: { $0.number == number }) else { return nil }
        self = match
    }
}

/// Signals delivered as a file descriptor, so the main thread waits for them without handlers.
///
/// The signals must be blocked in every thread, so ``block(_:)`` runs before any thread starts.
public struct SignalFD: ~Copyable, Sendable {
    public let fd: Int32

    /// Blocks `signals` in this (and every later) thread and opens a signalfd for them. SIGPIPE is
    /// ignored too: a peer that closed must be an EPIPE error, never a dead server.
    public init(_ signals: [Signal]) throws(SystemError) {
        var set = sigset_t()
        let numbers = signals.map(\.number)
        _ = numbers.withUnsafeBufferPointer { CLinux_block_signals($0.baseAddress, Int32($0.count), &set) }
        Glibc.signal(SIGPIPE, SIG_IGN)
        fd = try Posix.check("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC)) }
    }

    deinit { Posix.close(fd) }

    /// The next pending signal, if one is waiting (never blocks).
    public func next() -> Signal? {
        guard Posix.waitReadable([fd], timeoutMilliseconds: 0).contains(fd) else { return nil }
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let (count, _) = Posix.retrying { withUnsafeMutableBytes(of: &info) { Glibc.read(fd, $0.baseAddress, size) } }
        return count == size ? Signal(number: Int32(info.ssi_signo)) : nil
    }
}

extension Posix {
    /// Sends `signal` to process `pid` (tests, and the supervisor of a child).
    public static func deliver(_ signal: Signal, to pid: Int32) { _ = kill(pid, signal.number) }
}
