import Testing

@testable import Server

@Suite("Failed handshakes in the log")
struct HandshakeFailureLogTests {
    @Test("One line per name and reason an interval, then the count of those left out; bounded in names")
    func onePerInterval() {
        var log = HandshakeFailureLog(intervalMilliseconds: 60_000, capacity: 3)
        #expect(
            log.line(serverName: "a.test", client: "192.0.2.1", reason: "no certificate", now: 0)
                == "TLS handshake for a.test from 192.0.2.1 failed: no certificate"
        )
        for time in 1...394 {
            #expect(log.line(serverName: "a.test", client: "192.0.2.1", reason: "no certificate", now: Int64(time)) == nil)
        }
        #expect(log.line(serverName: "a.test", client: "192.0.2.1", reason: "another", now: 500) != nil, "another reason is news")
        #expect(
            log.line(serverName: nil, client: "192.0.2.9", reason: "http request", now: 600)
                == "TLS handshake without a server name (SNI) from 192.0.2.9 failed: http request"
        )
        #expect(
            log.line(serverName: "a.test", client: "192.0.2.2", reason: "no certificate", now: 60_000)
                == "TLS handshake for a.test from 192.0.2.2 failed: no certificate (and 394 more like it in the last 60 s)"
        )
        // A flood of made-up names cannot grow it past its capacity, and names still get their line.
        for index in 0..<100 { #expect(log.line(serverName: "n\(index).test", client: "192.0.2.3", reason: "x", now: 70_000) != nil) }
    }
}
