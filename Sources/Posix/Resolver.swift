internal import Glibc
import Synchronization

/// Why a name could not be resolved, in words (`getaddrinfo`'s codes are not errno values).
public struct ResolveError: Error, Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var message: String
    /// The name does not exist (as opposed to a resolver that could not be reached).
    public var isNotFound: Bool
    /// The resolver gave no answer before the deadline.
    public var timedOut = false
    public var description: String { "\(host): \(message)" }
}

extension Posix {
    /// The addresses `host` resolves to for TCP, IPv4 first (as most clients try them), without duplicates.
    public static func resolve(_ host: String) -> Result<[String], ResolveError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let notFound = status == EAI_NONAME || status == EAI_FAIL
            return .failure(ResolveError(host: host, message: String(cString: gai_strerror(status)), isNotFound: notFound))
        }
        defer { freeaddrinfo(first) }
        var v4: [String] = []
        var v6: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr, let value = numericAddress(address) {
                if current.pointee.ai_family == AF_INET {
                    if !v4.contains(value) { v4.append(value) }
                } else if !v6.contains(value) {
                    v6.append(value)
                }
            }
            entry = current.pointee.ai_next
        }
        return .success(v4 + v6)
    }

    /// `resolve(_:)` bounded by a deadline.
    public static func resolve(_ host: String, timeoutMilliseconds: Int32) -> Result<[String], ResolveError> {
        withDeadline(timeoutMilliseconds, { resolve(host) })
            ?? .failure(ResolveError(host: host, message: "the resolver gave no answer in time", isNotFound: false, timedOut: true))
    }

    /// The name an address's reverse DNS (PTR) record gives, lower case without the trailing dot; nil when
    /// there is none, the address is not one, or the resolver gives no answer within the deadline.
    public static func reverseLookup(_ address: String, timeoutMilliseconds: Int32) -> String? {
        withDeadline(timeoutMilliseconds, { reverseLookup(address) }) ?? nil
    }

    private static func reverseLookup(_ address: String) -> String? {
        guard let (address, length) = try? socketAddress(address, port: 0) else { return nil }
        var storage = address
        var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &name, socklen_t(name.count), nil, 0, NI_NAMEREQD)
            }
        }
        guard status == 0 else { return nil }
        var text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `work` on a thread of its own, its answer if it comes within the deadline: the resolver's calls
    /// cannot be interrupted, so one that outlives the deadline is left to finish there, its answer unused.
    private static func withDeadline<Answer: Sendable>(_ timeoutMilliseconds: Int32, _ work: @escaping @Sendable () -> Answer) -> Answer? {
        guard let done = try? EventFD() else { return work() }
        let lookup = DeadlineLookup<Answer>(done: done)
        guard
            let thread = try? Thread({
                let result = work()
                lookup.answer.withLock { $0 = result }
                lookup.done.signal()
            })
        else { return work() }
        thread.detach()
        _ = wait(lookup.done.fd, for: .readable, timeoutMilliseconds: max(1, timeoutMilliseconds))
        return lookup.answer.withLock { $0 }
    }

    /// Connects to `address:port` within `timeoutMilliseconds`; the socket is non-blocking.
    public static func connect(address: String, port: Int, timeoutMilliseconds: Int32) -> Result<Int32, ConnectError> {
        let fd: Int32
        do {
            fd = try startConnect(address: address, port: port)
        } catch {
            return .failure(.failed(error))
        }
        guard wait(fd, for: .writable, timeoutMilliseconds: max(1, timeoutMilliseconds)) else {
            close(fd)
            return .failure(.timedOut)
        }
        if let error = connectionError(fd) {
            close(fd)
            return .failure(.failed(error))
        }
        return .success(fd)
    }

    public enum ConnectError: Error, Sendable, Equatable, CustomStringConvertible {
        case timedOut
        case failed(SystemError)

        /// In words, for logs: "connection refused", "no answer in time".
        public var description: String {
            switch self {
            case .timedOut: return "no answer in time"
            case .failed(let error): return error.reason.lowercased()
            }
        }

        public var isRefused: Bool {
            if case .failed(let error) = self { return error.code == ECONNREFUSED }
            return false
        }
    }
}

/// The answer of a lookup run on its own thread, and the descriptor that says it is there.
private final class DeadlineLookup<Answer: Sendable>: Sendable {
    let answer = Mutex<Answer?>(nil)
    let done: EventFD
    init(done: consuming EventFD) { self.done = done }
}
