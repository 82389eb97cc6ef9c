import Glibc
import Posix
import Testing

/// The event loop's reads, writes and waits are made with syscall(2) rather than glibc's wrappers (which are
/// cancellation points): each outcome the loop acts on must still come back as it did.
@Suite("The event loop's socket calls and their outcomes")
struct SocketCallTests {
    /// A connected pair of non-blocking stream sockets; both are closed after `body`.
    private func withSocketPair(_ body: (Int32, Int32) throws -> Void) throws {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends) == 0)
        defer {
            Posix.close(ends[0])
            Posix.close(ends[1])
        }
        try body(ends[0], ends[1])
    }

    private func read(_ fd: Int32, count: Int = 4096) -> (IOResult, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: count)
        let result = buffer.withUnsafeMutableBytes { Posix.read(fd, into: $0) }
        if case .bytes(let read) = result { return (result, Array(buffer[0..<read])) }
        return (result, [])
    }

    @Test("Nothing waiting is wouldBlock(readable); bytes written arrive whole; a closed peer reads as closed")
    func readOutcomes() throws {
        try withSocketPair { server, client in
            #expect(read(server).0 == .wouldBlock(.readable))
            let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
            #expect(request.withUnsafeBytes { Posix.write(client, $0) } == .bytes(request.count))
            let (result, bytes) = read(server)
            #expect(result == .bytes(request.count))
            #expect(bytes == request)
            Posix.close(client)
            #expect(read(server).0 == .closed)
        }
    }

    @Test("A gather write sends its pieces in order, by pointer or copied; a full buffer is wouldBlock(writable); a gone peer is closed")
    func writeOutcomes() throws {
        try withSocketPair { server, client in
            let pieces = [Array("HTTP/1.1 200 OK\r\n".utf8), Array("Content-Length: 2\r\n\r\n".utf8), Array("{}".utf8)]
            var list = GatherList(capacity: 4)
            let written = pieces[0].withUnsafeBytes { first in
                pieces[1].withUnsafeBytes { second in
                    pieces[2].withUnsafeBytes { third in
                        list.append(first)
                        list.append(second)
                        list.append(third)
                        return list.write(to: server)
                    }
                }
            }
            #expect(written == .bytes(pieces.joined().count))
            #expect(read(client).1 == Array(pieces.joined()))
            // The same pieces copied into one buffer first, sent with one send: the same bytes arrive.
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: list.byteCount, alignment: 8)
            defer { buffer.deallocate() }
            let copied = pieces[0].withUnsafeBytes { first in
                pieces[1].withUnsafeBytes { second in
                    pieces[2].withUnsafeBytes { third in
                        list.removeAll()
                        list.append(first)
                        list.append(second)
                        list.append(third)
                        return list.writeCopied(to: server, through: buffer)
                    }
                }
            }
            #expect(copied == .bytes(pieces.joined().count))
            #expect(read(client).1 == Array(pieces.joined()))

            // Fill the send buffer without reading: the loop must learn to wait for writable, not fail.
            let chunk = [UInt8](repeating: 0x61, count: 65_536)
            var last = IOResult.bytes(0)
            for _ in 0..<1_000 {
                last = chunk.withUnsafeBytes { Posix.write(server, $0) }
                if last.isWouldBlock { break }
            }
            #expect(last == .wouldBlock(.writable))

            Posix.close(client)
            #expect(chunk.withUnsafeBytes { Posix.write(server, $0) } == .closed, "EPIPE ends the connection quietly")
        }
    }

    @Test("A call on a descriptor that is not open fails, named by its call and errno")
    func failure() {
        var buffer = [UInt8](repeating: 0, count: 16)
        let result = buffer.withUnsafeMutableBytes { Posix.read(-1, into: $0) }
        guard case .failed(let message) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(message.contains("read"))
        #expect(message.contains("Bad file descriptor") || message.contains("EBADF"), "\(message)")
    }

    @Test("epoll reports a readable socket with its token, and nothing once it is drained, within the timeout")
    func epollWait() throws {
        try withSocketPair { server, client in
            let epoll = try Epoll()
            try epoll.add(server, token: 42, readable: true, writable: false)
            var seen: [Epoll.Event] = []
            try epoll.wait(timeoutMilliseconds: 0) { seen.append($0) }
            #expect(seen.isEmpty)
            _ = [UInt8(1)].withUnsafeBytes { Posix.write(client, $0) }
            try epoll.wait(timeoutMilliseconds: 1_000) { seen.append($0) }
            #expect(seen.map(\.token) == [42])
            #expect(seen.first?.readable == true)
            _ = read(server)
            seen = []
            try epoll.wait(timeoutMilliseconds: 10) { seen.append($0) }
            #expect(seen.isEmpty)
        }
    }
}
