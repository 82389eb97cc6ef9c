import AASA
import Foundation
import HTTP1
import LinkStore
import Links
import Synchronization
import TestSupport
import Testing

@testable import Server

/// The link API's worker thread on its own, without sockets: calls in, answers out, a loop woken for
/// each; many thousands of calls in a row (each reads the config and wakes a loop), which once overflowed
/// its stack.
@Suite("Link API worker")
struct LinkAPIWorkerTests {
    @Test("20,000 calls answered in order of submission, their loop woken for each batch; the worker's stack stays put")
    func manyCalls() throws {
        try withTemporaryDirectory { directory in
            let loaded = ConfigLoader.load(
                configBytes: Array(StoredLinkRoutingTests.config.utf8),
                configPath: directory + "/config.json",
                readFile: { _ in .failure(FileReadError("none")) }
            )
            let worker = try LinkAPIWorker(location: .sqlite(path: directory + "/links.sqlite"))
            let woken = Atomic<Int>(0)
            let configReads = Atomic<Int>(0)
            worker.start(
                config: {
                    configReads.add(1, ordering: .relaxed)
                    return loaded
                },
                wakeLoop: { _ in woken.add(1, ordering: .relaxed) },
                changed: {}
            )
            defer { worker.stop() }
            let total = 20_000
            var answered: [Int] = []
            var submitted = 0
            let deadline = Date().addingTimeInterval(120)
            while answered.count < total && Date() < deadline {
                while submitted < total && submitted - answered.count < LinkAPIWorker.queueLimit / 2 {
                    let call: ShortLinkAPI.Call =
                        submitted % 2 == 0 ? .domainState(domain: "go.example.com") : .read(domain: "go.example.com", suffix: "none")
                    let job = LinkAPIWorker.Job(
                        ticket: ReloadMailbox.Ticket(loop: 0, slot: submitted, serial: 1),
                        call: call,
                        token: .admin,
                        body: []
                    )
                    #expect(worker.submit(job))
                    submitted += 1
                }
                let answers = worker.takeAnswers(forLoop: 0)
                for (ticket, response) in answers {
                    #expect(response.status == (ticket.slot % 2 == 0 ? 200 : 404), "call \(ticket.slot)")
                    answered.append(ticket.slot)
                }
                if answers.isEmpty { usleep(200) }
            }
            #expect(answered == Array(0..<total), "every call answered once, in order")
            // A loop is woken once per batch of its calls (one transaction each).
            let wakes = woken.load(ordering: .relaxed)
            #expect(wakes >= total / LinkAPIWorker.queueLimit && wakes <= total && configReads.load(ordering: .relaxed) == total / 2)
        }
    }

    @Test("The console's form creates with the token typed into it: the link API's or the admin's; none configured, none works")
    func formToken() {
        let both = AdminPolicy(token: Array("admin-secret".utf8), linkAPIToken: Array("api-secret".utf8))
        #expect(LinkAPIWorker.formToken("api-secret", policy: both) == .success(.linkAPI))
        #expect(LinkAPIWorker.formToken("admin-secret", policy: both) == .success(.admin))
        for typed in ["api-secret ", "admin", "", nil] as [String?] {
            guard case .failure(let problem) = LinkAPIWorker.formToken(typed, policy: both) else {
                Issue.record("\(typed ?? "no token") is taken")
                continue
            }
            #expect(problem.status == 401 && problem.path == "$.token")
        }
        guard case .failure(let problem) = LinkAPIWorker.formToken("anything", policy: AdminPolicy()) else {
            Issue.record("a token is taken with none configured")
            return
        }
        #expect(problem.status == 403 && problem.detail.contains("set server.linkAPI.tokenFile"))
    }
}
