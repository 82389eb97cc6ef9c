import AASA
import HTTP1
import TestSupport
import Testing

@testable import Server

/// Plays the event loop and the peer for one state machine: reads come from `incoming`, writes land in
/// `written`, TLS handshake steps come from a script, and every action is recorded. No sockets.
///
/// Like the loop, it hands the machine each read where it landed; whenever the loop would reuse that
/// buffer (the machine asks to read, peek, consume raw bytes or step a handshake, waits, or the
/// connection ends) the buffer is overwritten, so a machine that kept using bytes it did not copy
/// answers garbage and the test fails.
final class ScriptedConnection {
    typealias Action = ConnectionStateMachine.Action

    let clock: LoopClock
    var machine: ConnectionStateMachine
    /// Bytes the peer has sent that the connection has not read yet (each element is one read's worth).
    var incoming: [[UInt8]] = []
    var peerHasClosed = false
    /// Each read says whether more is already buffered (as TLS does when a record held more than one
    /// read's worth), so the machine reads again at once instead of waiting for readiness.
    var readsSayMoreBuffered = false
    /// What a read does when nothing is waiting (TLS may need the socket writable to read).
    var readBlocksUntil = ConnectionStateMachine.Readiness.readable
    var written: [UInt8] = []
    /// Bytes the socket accepts before a write blocks (nil: unlimited).
    var writeRoom: Int?
    var writeBlocksUntil = ConnectionStateMachine.Readiness.writable
    var handshakeScript: [ConnectionStateMachine.HandshakeStep] = []
    /// Raw bytes waiting on the socket before TLS (a PROXY header plus the ClientHello).
    var rawWaiting: [UInt8] = []
    var actions: [Action] = []
    var answered: [String] = []
    var reloadRequested = false
    /// Routes a request: nil asks for a reload, otherwise the response.
    var route: (RequestHead, UnsafeBufferPointer<UInt8>) -> PreparedResponse? = { _, _ in ScriptedConnection.ok }

    static let ok = PreparedResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))

    /// The buffer the last read landed in, and earlier ones (overwritten, freed at the end).
    private var readBuffer: UnsafeMutableRawBufferPointer?
    private var retiredBuffers: [UnsafeMutableRawBufferPointer] = []
    /// How many times a buffer the machine had been given was overwritten.
    private(set) var buffersReused = 0

    deinit {
        for buffer in retiredBuffers + (readBuffer.map { [$0] } ?? []) { buffer.deallocate() }
    }

    private func reuseReadBuffer() {
        guard let buffer = readBuffer else { return }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
        retiredBuffers.append(buffer)
        readBuffer = nil
        buffersReused += 1
    }

    init(
        tls: Bool = false,
        proxy: Bool = false,
        keepsBodies: Bool = false,
        configure: (inout ConnectionSettings) -> Void = { _ in }
    ) {
        clock = LoopClock(now: 1_000_000, unixSeconds: 1_764_500_000)
        var settings = ConnectionSettings(.init())
        configure(&settings)
        machine = ConnectionStateMachine(settings: settings, clock: clock, usesTLS: tls, proxyProtocol: proxy, keepsBodies: keepsBodies)
    }

    /// The kept body of each request answered, in order ("" for none).
    var keptBodies: [String] = []

    func send(_ text: String) { incoming.append(Array(text.utf8)) }

    var writtenText: String { String(decoding: written, as: UTF8.self) }

    /// Carries out actions until the machine waits or the connection ends; returns the actions taken.
    @discardableResult
    func run(limit: Int = 200) -> [Action] {
        var taken: [Action] = []
        for _ in 0..<limit {
            let action = machine.nextAction()
            taken.append(action)
            actions.append(action)
            switch action {
            case .wait, .close, .abort, .read, .peekProxyHeader, .consumeRaw, .stepHandshake: reuseReadBuffer()
            default: break
            }
            switch action {
            case .wait, .close, .abort:
                return taken
            case .stepHandshake:
                machine.handshakeStepped(handshakeScript.isEmpty ? .wouldBlock(.readable) : handshakeScript.removeFirst())
            case .peekProxyHeader:
                if rawWaiting.isEmpty {
                    machine.readBlocked(until: .readable)
                } else {
                    rawWaiting.withUnsafeBufferPointer { machine.peeked($0) }
                }
            case .consumeRaw(let count):
                rawWaiting.removeFirst(count)
                machine.consumedRaw()
            case .read:
                if !incoming.isEmpty {
                    let chunk = incoming.removeFirst()
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunk.count, 1), alignment: 16)
                    chunk.withUnsafeBytes { buffer.copyMemory(from: $0) }
                    readBuffer = buffer
                    machine.received(
                        UnsafeRawBufferPointer(rebasing: buffer[0..<chunk.count]),
                        moreBuffered: readsSayMoreBuffered && !incoming.isEmpty
                    )
                } else if peerHasClosed {
                    machine.readEnded()
                } else {
                    machine.readBlocked(until: readBlocksUntil)
                }
            case .answer:
                keptBodies.append(
                    machine.keptBody.map { range in machine.input.withBytes { String(decoding: $0[range], as: UTF8.self) } } ?? ""
                )
                let head = machine.request
                let response = machine.input.withBytes { buffer -> PreparedResponse? in
                    answered.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[head.targetRange]), as: UTF8.self))
                    return route(head, buffer)
                }
                if let response {
                    machine.respond(response)
                } else {
                    machine.respondWithReload()
                }
            case .submitReload:
                reloadRequested = true
            case .write:
                var pending = [UInt8](repeating: 0, count: machine.output.byteCount)
                let gathered = pending.withUnsafeMutableBytes { machine.gatherOutput(into: $0) }
                #expect(gathered == pending.count)
                let count = min(pending.count, writeRoom ?? pending.count)
                if count == 0 {
                    machine.writeBlocked(until: writeBlocksUntil)
                } else {
                    written += pending[0..<count]
                    if writeRoom != nil { writeRoom! -= count }
                    machine.wrote(count)
                }
            case .rejected, .timedOut, .handshakeFailed, .setNoDelay, .setInterest, .shutdownWrite:
                break
            }
        }
        Issue.record("the machine did not settle within \(limit) actions: \(taken.suffix(10))")
        return taken
    }

    func advance(seconds: Double) {
        clock.set(now: clock.now + Int64(seconds * 1_000_000), unixSeconds: 1_764_500_000 + Int(seconds))
    }

    func tick() -> [Action] {
        _ = machine.tick()
        return run()
    }

    var responses: [HTTPResponse] { HTTPResponse.parseAll(written) }
}

let simpleGet = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"

@Suite("Connection state machine (no sockets)")
struct ConnectionStateMachineTests {
    @Test("A keep-alive GET: read, answer, no-delay, write, then wait for the next request")
    func keepAlive() {
        let connection = ScriptedConnection()
        connection.send(simpleGet)
        let actions = connection.run()
        #expect(actions.first == .read)
        #expect(actions.contains(.setNoDelay))
        #expect(actions.suffix(2) == [.setInterest(.init(readable: true, writable: false)), .wait])
        #expect(connection.responses.count == 1)
        #expect(connection.responses.first?.status == 200)
        #expect(connection.responses.first?.header("Connection") == nil)
        #expect(connection.responses.first?.header("Date") == "Sun, 30 Nov 2025 10:53:20 GMT")
        #expect(connection.machine.idleSince != nil)
        // The next request on the same connection.
        connection.send(simpleGet)
        connection.machine.socketReady(readable: true, writable: false)
        let again = connection.run()
        #expect(!again.contains(.setNoDelay), "Nagle is turned off once")
        #expect(connection.responses.count == 2)
    }

    @Test("Pipelined requests are answered in order, from one read, in one write")
    func pipelining() {
        let connection = ScriptedConnection()
        connection.send((1...3).map { "GET /\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined())
        let actions = connection.run()
        #expect(connection.answered == ["/1", "/2", "/3"])
        #expect(actions.filter { $0 == .write }.count == 1)
        #expect(connection.responses.count == 3)
    }

    @Test(
        "Requests are answered where they were read; a head split across reads, or cut by the end of a read after others, is copied before the next read and answered whole"
    )
    func headsAcrossReads() {
        let connection = ScriptedConnection()
        connection.send("GET /first HTTP/1.1\r\nHo")
        connection.run()
        connection.send("st: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\nGET /th")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.answered == ["/first", "/second"])
        connection.send("ird HTTP/1.1\r\nHost: a\r\nUser-Agent: x\r\n\r\n")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.answered == ["/first", "/second", "/third"])
        #expect(connection.responses.map(\.status) == [200, 200, 200])
        #expect(connection.buffersReused == 3, "every read's buffer was overwritten once the machine was done with it")
        #expect(connection.machine.input.isEmpty)

        // The same reads back to back, as TLS gives them: the next read comes before any wait.
        let tls = ScriptedConnection()
        tls.readsSayMoreBuffered = true
        tls.send("GET /first HTTP/1.1\r\nHo")
        tls.send("st: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\nGET /th")
        tls.send("ird HTTP/1.1\r\nHost: a\r\nUser-Agent: x\r\n\r\n")
        let actions = tls.run()
        #expect(tls.answered == ["/first", "/second", "/third"])
        #expect(tls.responses.map(\.status) == [200, 200, 200])
        #expect(actions.filter { $0 == .read }.count >= 3 && actions.filter { $0 == .wait }.count == 1)
    }

    @Test("Connection: close closes after the answer; HTTP/1.0 keep-alive is confirmed")
    func connectionHeader() {
        let closing = ScriptedConnection()
        closing.send("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        #expect(closing.run().last == .close)
        #expect(closing.responses.first?.header("Connection") == "close")

        let old = ScriptedConnection()
        old.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(old.run().last == .wait)
        #expect(old.responses.first?.header("Connection") == "keep-alive")

        let oldClosing = ScriptedConnection()
        oldClosing.send("GET / HTTP/1.0\r\n\r\n")
        #expect(oldClosing.run().last == .close)
    }

    @Test("After maxRequests the answer says close and the connection ends")
    func maxRequests() {
        let connection = ScriptedConnection { $0.maxRequests = 2 }
        connection.send(simpleGet + simpleGet + simpleGet)
        // The third request is never answered: the connection lingers over it, then ends.
        #expect(connection.run().contains(.shutdownWrite))
        #expect(connection.answered.count == 2)
        #expect(connection.responses.last?.header("Connection") == "close")
    }

    @Test("A body is read and judged before the answer, however it is split; the next request follows")
    func bodyThenAnswer() {
        let connection = ScriptedConnection()
        connection.send("GET /a HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234")
        connection.run()
        #expect(connection.answered.isEmpty, "no answer while the body is still arriving")
        connection.send("56789GET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.answered == ["/a", "/b"])
        #expect(connection.responses.map(\.status) == [200, 200])

        let chunked = ScriptedConnection()
        chunked.send("GET /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        chunked.run()
        #expect(chunked.answered == ["/c"])
    }

    @Test("An admin connection keeps a Content-Length body for the answer, however it is split; the next request still follows")
    func keptBody() {
        let connection = ScriptedConnection(keepsBodies: true)
        connection.send("POST /v1/shortLinks HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01")
        connection.run()
        connection.send("234")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.answered.isEmpty, "no answer while the body is still arriving")
        connection.send("56789GET /b HTTP/1.1\r\nHost: a\r\n\r\nPOST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.answered == ["/v1/shortLinks", "/b", "/c"])
        #expect(connection.keptBodies == ["0123456789", "", "xyz"])
        #expect(connection.responses.map(\.status) == [200, 200, 200])

        // Chunked bodies are dropped even here (the API asks for Content-Length); the main listener keeps none.
        let chunked = ScriptedConnection(keepsBodies: true)
        chunked.send(
            "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /d HTTP/1.1\r\nHost: a\r\n\r\n"
        )
        chunked.run()
        #expect(chunked.answered == ["/c", "/d"] && chunked.keptBodies == ["", ""])
        let main = ScriptedConnection()
        main.send("POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyzGET /f HTTP/1.1\r\nHost: a\r\n\r\n")
        main.run()
        #expect(main.answered == ["/e", "/f"] && main.keptBodies == ["", ""])
        // Over the limit: 413 before any of it is kept.
        let large = ScriptedConnection(keepsBodies: true) { $0.limits.bodyBytes = 100 }
        large.send("POST /g HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n")
        large.run()
        #expect(large.responses.map(\.status) == [413] && large.answered.isEmpty)
    }

    @Test(
        "Bad chunked framing is the answer: 400 and close, never a 200 first",
        arguments: [
            "zz\r\n", "0x5\r\nhello\r\n0\r\n\r\n", "fffffffffffffffff\r\n", "3\r\nabcX\r\n", "3\nabc\r\n0\r\n\r\n", "0\r\nTrailer\n\r\n",
        ]
    )
    func badChunks(body: String) {
        let connection = ScriptedConnection()
        connection.send("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
        connection.peerHasClosed = true
        let actions = connection.run()
        #expect(connection.answered.isEmpty)
        #expect(connection.responses.map(\.status) == [400], "\(body.debugDescription)")
        #expect(connection.responses.first?.header("Connection") == "close")
        #expect(actions.contains { if case .rejected(_, _) = $0 { return true } else { return false } })
        #expect(actions.last == .close || actions.last == .shutdownWrite)
    }

    @Test("A declared body over the limit is 413 at once; the unread rest is lingered over, then closed")
    func tooLarge() {
        let connection = ScriptedConnection { $0.limits.bodyBytes = 100 }
        connection.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\nxxxx")
        let actions = connection.run()
        #expect(connection.responses.map(\.status) == [413])
        #expect(actions.contains(.shutdownWrite))
        // Lingering reads and drops what the client still sends, then closes when it closes.
        connection.send("more body")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        connection.peerHasClosed = true
        connection.machine.socketReady(readable: true, writable: false)
        #expect(connection.run().last == .close)
        #expect(connection.responses.count == 1)
    }

    @Test("A lingering connection is closed when the linger time is over")
    func lingerTimeout() {
        let connection = ScriptedConnection()
        connection.send("GET / HTTP/1.1\r\nHost: a b\r\n\r\nleftover")
        let actions = connection.run()
        #expect(actions.contains(.shutdownWrite))
        connection.advance(seconds: 3)
        #expect(connection.tick().last == .close)
    }

    @Test("A body that stops arriving: 408 when the body deadline passes, then close")
    func bodyTimeout() {
        let connection = ScriptedConnection()
        connection.send("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01")
        connection.run()
        connection.advance(seconds: 9)
        #expect(connection.tick() == [.wait])
        connection.advance(seconds: 2)
        let actions = connection.tick()
        #expect(actions.first == .timedOut(.body))
        #expect(connection.responses.map(\.status) == [408])
        #expect(connection.responses.first?.bodyText.contains("request body not received in time") == true)
        #expect(actions.contains(.shutdownWrite), "the unread request is lingered over, so the client sees the 408")
    }

    @Test("Expect: 100-continue gets 100 Continue before the body is read, then the final answer; never to HTTP/1.0")
    func expectContinue() {
        let connection = ScriptedConnection()
        connection.send(
            "POST /.well-known/apple-app-site-association HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        )
        connection.run()
        let interim = String(decoding: connection.written, as: UTF8.self)
        #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n", "\(interim)")
        connection.send("hello")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        let all = String(decoding: connection.written, as: UTF8.self)
        #expect(all.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), "\(all)")

        let old = ScriptedConnection()
        old.send("POST / HTTP/1.0\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        old.run()
        #expect(old.written.isEmpty, "HTTP/1.0 has no interim responses")

        // A client that sends the body at once needs no 100; a body over the limit is refused without one.
        let eager = ScriptedConnection()
        eager.send("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello")
        eager.run()
        #expect(!String(decoding: eager.written, as: UTF8.self).contains("100 Continue"))
        let big = ScriptedConnection()
        big.send("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 99999999\r\n\r\n")
        big.run()
        #expect(big.responses.map(\.status) == [413])
    }

    @Test("Header deadline: 408 to a client that sent part of a request; a reset to one that sent nothing")
    func headerTimeout() {
        let slow = ScriptedConnection()
        slow.send("GET / HTTP/1.1\r\nHo")
        slow.run()
        slow.advance(seconds: 10.5)
        let actions = slow.tick()
        #expect(actions.prefix(2) == [.timedOut(.header), .rejected(.requestTimeout, bytes: slow.written.count)])
        #expect(slow.responses.map(\.status) == [408])

        let silent = ScriptedConnection()
        silent.run()
        silent.advance(seconds: 10.5)
        #expect(silent.tick() == [.timedOut(.header), .abort(reason: nil)])
    }

    @Test("The header clock of a later request starts at its first byte, not when the connection went idle")
    func headerClockPerRequest() {
        let connection = ScriptedConnection()
        connection.send(simpleGet)
        connection.run()
        connection.advance(seconds: 60)
        connection.send("GET / HTTP/1.1\r\n")
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        connection.advance(seconds: 5)
        #expect(connection.tick() == [.wait], "5 s into this request's header: not yet")
        connection.advance(seconds: 6)
        #expect(connection.tick().first == .timedOut(.header))
    }

    @Test("Keep-alive timeout closes an idle connection gracefully")
    func keepAliveTimeout() {
        let connection = ScriptedConnection()
        connection.send(simpleGet)
        connection.run()
        connection.advance(seconds: 74)
        #expect(connection.tick() == [.wait])
        connection.advance(seconds: 2)
        #expect(connection.tick() == [.timedOut(.keepalive), .close])
    }

    @Test("Write timeout: a client that stops reading is reset once the write has made no progress for writeTimeout")
    func writeTimeout() {
        let connection = ScriptedConnection()
        connection.writeRoom = 0
        connection.send(simpleGet)
        let actions = connection.run()
        #expect(actions.suffix(2) == [.setInterest(.init(readable: true, writable: true)), .wait])
        connection.advance(seconds: 29)
        #expect(connection.tick() == [.wait])
        connection.advance(seconds: 2)
        #expect(connection.tick() == [.timedOut(.write), .abort(reason: nil)])
    }

    @Test("Backpressure: a client that pipelines without reading is not read from until its answers drain")
    func backpressure() {
        let connection = ScriptedConnection { $0.outputHighWater = 1000 }
        connection.writeRoom = 0
        let many = String(repeating: simpleGet, count: 40)
        connection.send(many)
        let actions = connection.run()
        #expect(connection.answered.count < 40, "parsing stops at the high-water mark")
        #expect(actions.last == .wait)
        #expect(actions.dropLast().last == .setInterest(.init(readable: false, writable: true)))
        // The client reads: the rest is answered.
        connection.writeRoom = nil
        connection.machine.socketReady(readable: false, writable: true)
        connection.run()
        #expect(connection.answered.count == 40)
        #expect(connection.responses.count == 40)
    }

    @Test("A half-closed client still gets every answer, then the connection closes")
    func halfClose() {
        let connection = ScriptedConnection()
        connection.send(simpleGet + simpleGet)
        connection.peerHasClosed = true
        connection.run()
        // After the first read the peer's end of stream is seen on the next read.
        connection.machine.socketReady(readable: true, writable: false)
        let actions = connection.run()
        #expect(connection.responses.count == 2)
        #expect(actions.last == .close)
    }

    @Test("PROXY v1 on a plain listener: the header gives the client address, then the request is served")
    func proxyPlain() {
        let connection = ScriptedConnection(proxy: true)
        connection.send("PROXY TCP4 203.0.113.7 10.0.0.1 51234 8080\r\n" + simpleGet)
        connection.run()
        #expect(connection.machine.proxiedClient == "203.0.113.7")
        #expect(connection.responses.count == 1)

        let garbage = ScriptedConnection(proxy: true)
        garbage.send(simpleGet)
        let actions = garbage.run()
        if case .abort(let reason)? = actions.last {
            #expect(reason?.contains("PROXY") == true)
        } else {
            Issue.record("expected an abort, got \(actions)")
        }
        #expect(garbage.written.isEmpty)
    }

    @Test("PROXY before TLS: peeked, consumed exactly, then the handshake starts on the rest")
    func proxyThenTLS() {
        let connection = ScriptedConnection(tls: true, proxy: true)
        let header = Array("PROXY TCP6 2001:db8::1 2001:db8::2 4000 443\r\n".utf8)
        connection.rawWaiting = header + [0x16, 0x03, 0x01]
        connection.handshakeScript = [.done]
        connection.incoming = [Array(simpleGet.utf8)]
        let actions = connection.run()
        #expect(actions.prefix(3) == [.peekProxyHeader, .consumeRaw(header.count), .stepHandshake])
        #expect(connection.rawWaiting == [0x16, 0x03, 0x01], "OpenSSL gets the ClientHello untouched")
        #expect(connection.machine.proxiedClient == "2001:db8::1")
        #expect(connection.responses.count == 1)
    }

    @Test("A partial PROXY header before TLS waits for the timer, not for readiness (a peeked socket stays readable)")
    func proxyPartialPeek() {
        let connection = ScriptedConnection(tls: true, proxy: true)
        connection.rawWaiting = Array("PROXY TCP4 1.2.3.4".utf8)
        let actions = connection.run()
        #expect(actions.suffix(2) == [.setInterest(.init(readable: false, writable: false)), .wait])
        connection.rawWaiting += Array(" 5.6.7.8 1 2\r\n".utf8)
        #expect(connection.tick().prefix(2) == [.peekProxyHeader, .consumeRaw(32)])
    }

    @Test("TLS handshake: wants write, then read, then done; the request read after it")
    func handshakeBothDirections() {
        let connection = ScriptedConnection(tls: true)
        connection.handshakeScript = [.wouldBlock(.writable)]
        #expect(connection.run() == [.stepHandshake, .setInterest(.init(readable: false, writable: true)), .wait])
        connection.handshakeScript = [.wouldBlock(.readable)]
        connection.machine.socketReady(readable: false, writable: true)
        #expect(connection.run() == [.stepHandshake, .setInterest(.init(readable: true, writable: false)), .wait])
        connection.handshakeScript = [.done]
        connection.send(simpleGet)
        connection.machine.socketReady(readable: true, writable: false)
        let actions = connection.run()
        #expect(actions.prefix(2) == [.stepHandshake, .read])
        #expect(connection.responses.count == 1)
    }

    @Test("A handshake waiting for its certificate parks (no spin), steps again at a tick or when unparked, then goes on")
    func handshakeWaitsForCertificate() {
        let connection = ScriptedConnection(tls: true)
        connection.handshakeScript = [.waitingForCertificate]
        let first = connection.run()
        #expect(first.first == .stepHandshake && first.last == .wait, "\(first)")
        #expect(!first.dropFirst().contains(.stepHandshake), "parked, not stepped again at once: \(first)")
        #expect(connection.machine.waitingForCertificate)
        // Readiness of the socket does not step it: no event will say the certificate is ready.
        connection.machine.socketReady(readable: true, writable: false)
        #expect(!connection.run().contains(.stepHandshake))
        // The tick steps it again; still waiting, it parks again.
        connection.handshakeScript = [.waitingForCertificate]
        let ticked = connection.machine.tick()
        #expect(ticked)
        #expect(connection.run().first == .stepHandshake)
        // The loop's wake-up (the certificate is ready): stepped at once, and the request follows.
        connection.handshakeScript = [.done]
        connection.send(simpleGet)
        let unparked = connection.machine.unpark()
        #expect(unparked)
        let actions = connection.run()
        #expect(actions.prefix(2) == [.stepHandshake, .read], "\(actions)")
        #expect(!connection.machine.waitingForCertificate)
        #expect(connection.responses.count == 1)
        let unparkedAgain = connection.machine.unpark()
        #expect(!unparkedAgain, "nothing parked any more")
    }

    @Test("A failed TLS handshake (plain HTTP on a TLS port) is aborted without an answer, its reason handed to the log")
    func handshakeFailure() {
        let connection = ScriptedConnection(tls: true)
        connection.handshakeScript = [.failed("wrong version number")]
        #expect(connection.run() == [.stepHandshake, .handshakeFailed("wrong version number"), .abort(reason: nil)])
        #expect(connection.written.isEmpty)
    }

    @Test("TLS read that needs the socket writable, and a write that needs it readable")
    func tlsCrossedReadiness() {
        let connection = ScriptedConnection(tls: true)
        connection.handshakeScript = [.done]
        connection.readBlocksUntil = .writable
        #expect(connection.run().suffix(2) == [.setInterest(.init(readable: false, writable: true)), .wait])
        // Readable does not retry a read that waits for writable.
        connection.machine.socketReady(readable: true, writable: false)
        #expect(connection.run() == [.wait])
        connection.readBlocksUntil = .readable
        connection.send(simpleGet)
        connection.writeRoom = 0
        connection.writeBlocksUntil = .readable
        connection.machine.socketReady(readable: false, writable: true)
        let actions = connection.run()
        #expect(actions.suffix(2) == [.setInterest(.init(readable: true, writable: false)), .wait])
        connection.writeRoom = nil
        connection.machine.socketReady(readable: true, writable: false)
        connection.run()
        #expect(connection.responses.count == 1)
    }

    @Test("Drain: an idle connection is closed at once; one in the middle of a request is answered with close")
    func drain() {
        let idle = ScriptedConnection()
        idle.send(simpleGet)
        idle.run()
        idle.machine.beginDrain()
        #expect(idle.run() == [.close])

        let busy = ScriptedConnection()
        busy.send("GET / HTTP/1.1\r\nHost: a\r\n")
        busy.run()
        busy.machine.beginDrain()
        #expect(busy.run() == [.wait])
        busy.send("\r\n")
        busy.machine.socketReady(readable: true, writable: false)
        #expect(busy.run().last == .close)
        #expect(busy.responses.first?.header("Connection") == "close")
    }

    @Test("POST /reload: the answer waits for the reload; input is not read meanwhile; pipelined requests follow")
    func reload() {
        let connection = ScriptedConnection()
        connection.route = { head, buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[head.pathRange]), as: UTF8.self) == "/reload"
                ? nil : ScriptedConnection.ok
        }
        connection.send("POST /reload HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}" + simpleGet)
        let actions = connection.run()
        #expect(connection.reloadRequested)
        #expect(actions.suffix(2) == [.setInterest(.init(readable: false, writable: false)), .wait])
        #expect(connection.written.isEmpty)
        connection.machine.respond(StandardResponses.json(status: 200, #"{"result":"reloaded"}"#))
        connection.run()
        #expect(connection.responses.map(\.status) == [200, 200])
        #expect(connection.answered == ["/reload", "/.well-known/apple-app-site-association"])
    }

    @Test("Bytes that cannot start a request (a TLS ClientHello on a plain port) get 400 at once")
    func notHTTP() {
        let connection = ScriptedConnection()
        connection.incoming = [[0x16, 0x03, 0x01, 0x02, 0x00]]
        connection.run()
        #expect(connection.responses.map(\.status) == [400])
        #expect(connection.responses.first?.bodyText.contains("TLS handshake") == true)
    }

    @Test("Eviction rank: idle connections first (longest idle first), then those still sending a request; never one being answered")
    func evictionRank() {
        let idle = ScriptedConnection()
        idle.send(simpleGet)
        idle.run()
        #expect(idle.machine.evictionRank?.group == 0)

        let sending = ScriptedConnection()
        sending.send("GET / HTTP/1.1\r\n")
        sending.run()
        #expect(sending.machine.evictionRank?.group == 1)

        let body = ScriptedConnection()
        body.send("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n1")
        body.run()
        #expect(body.machine.evictionRank?.group == 1)

        let stuck = ScriptedConnection()
        stuck.writeRoom = 0
        stuck.send(simpleGet)
        stuck.run()
        #expect(stuck.machine.evictionRank == nil, "a connection with an answer to deliver is not a victim")

        idle.machine.evict()
        #expect(idle.run() == [.abort(reason: nil)])
    }
}
