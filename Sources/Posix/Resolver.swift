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

    /// `resolve(_:)` bounded by a deadline: `getaddrinfo` cannot be interrupted, so it runs on a thread of
    /// its own, and a lookup that outlives the deadline is left to finish there, its answer unused.
    public static func resolve(_ host: String, timeoutMilliseconds: Int32) -> Result<[String], ResolveError> {
        final class Lookup: Sendable {
            let answer = Mutex<Result<[String], ResolveError>?>(nil)
            let done: EventFD
            init(done: consuming EventFD) { self.done = done }
        }
        guard let done = try? EventFD() else { return resolve(host) }
        let lookup = Lookup(done: done)
        guard
            let thread = try? Thread({
                let result = resolve(host)
                lookup.answer.withLock { $0 = result }
                lookup.done.signal()
            })
        else { return resolve(host) }
        thread.detach()
        _ = wait(lookup.done.fd, for: .readable, timeoutMilliseconds: max(1, timeoutMilliseconds))
        if let answer = lookup.answer.withLock({ $0 }) { return answer }
        return .failure(
            ResolveError(host: host, message: "the resolver gave no answer in time", isNotFound: false, timedOut: true)
        )
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

    public enum ConnectError: Error, Sendable, Equatable {
        case timedOut
        case failed(SystemError)

        public var isRefused: Bool {
            if case .failed(let error) = self { return error.code == ECONNREFUSED }
            return false
        }
    }
}
