import AASA
import HTTP1
import LinkStore
import Links
import Posix
import Support
import Synchronization

/// Carries out the link API's calls on a thread of its own, so no event loop waits on the database: a
/// loop hands over the call, its body and a ticket for the connection; the answer comes back through
/// ``takeAnswers(forLoop:)`` and a wake-up of that loop. Calls are taken in order, one at a time (SQLite
/// has one writer anyway); the queue is bounded, and a call beyond it is answered 503 at once.
final class LinkAPIWorker: Sendable {
    static let queueLimit = 1_024

    struct Job: Sendable {
        var ticket: ReloadMailbox.Ticket
        var call: ShortLinkAPI.Call
        var body: [UInt8]
    }

    private let path: String
    private let jobs = Mutex<[Job]>([])
    private let answers = Mutex<[(ReloadMailbox.Ticket, PreparedResponse)]>([])
    private let wakeup: EventFDBox
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<Posix.Thread?>(nil)
    /// The config in force (the domain and allowlist a creation is checked against), read per call, and
    /// how to wake the loop holding an answered connection: both known once the server runs.
    private let server = Mutex<(config: @Sendable () -> LoadedConfig, wakeLoop: @Sendable (Int) -> Void, changed: @Sendable () -> Void)?>(
        nil
    )

    init(path: String) throws(SystemError) {
        self.path = path
        wakeup = try EventFDBox()
    }

    /// `changed`: the store was written (the watcher reads it at once).
    func start(
        config: @escaping @Sendable () -> LoadedConfig,
        wakeLoop: @escaping @Sendable (Int) -> Void,
        changed: @escaping @Sendable () -> Void
    ) {
        server.withLock { $0 = (config, wakeLoop, changed) }
        let started = try? Posix.Thread { [self] in run() }
        thread.withLock { $0 = started }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wakeup.signal()
        thread.withLock { $0 }?.join()
    }

    /// False when the queue is full: answer 503 now.
    func submit(_ job: Job) -> Bool {
        let queued = jobs.withLock { jobs in
            guard jobs.count < Self.queueLimit else { return false }
            jobs.append(job)
            return true
        }
        if queued { wakeup.signal() }
        return queued
    }

    func takeAnswers(forLoop loop: Int) -> [(ReloadMailbox.Ticket, PreparedResponse)] {
        answers.withLock { all in
            let mine = all.filter { $0.0.loop == loop }
            all.removeAll { $0.0.loop == loop }
            return mine
        }
    }

    private func run() {
        var database: LinkDatabase?
        while !stopped.load(ordering: .acquiring) {
            _ = Posix.waitReadable([wakeup.fd], timeoutMilliseconds: 1_000)
            wakeup.event.drain()
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in batch {
                let response: PreparedResponse
                do throws(LinkStoreError) {
                    if database == nil { database = try LinkDatabase(path: path) }
                    response = try answer(job, database!)
                } catch {
                    // The database is unreadable or busy: nothing was stored; the client may retry.
                    database = nil
                    Log.error("link API: \(error)")
                    response = AdminResponses.problem(
                        ShortLinkAPI.Problem(
                            status: 503,
                            title: "Link store unavailable",
                            detail: "\(error); nothing was changed, retry later"
                        ),
                        extraHeaders: [("Retry-After", "5")]
                    )
                }
                if changes(job.call), response.status == 200 { server.withLock { $0 }?.changed() }
                answers.withLock { $0.append((job.ticket, response)) }
                server.withLock { $0 }?.wakeLoop(job.ticket.loop)
            }
        }
    }

    private func changes(_ call: ShortLinkAPI.Call) -> Bool {
        switch call {
        case .create, .change: return true
        case .read, .stats: return false
        }
    }

    private func answer(_ job: Job, _ database: LinkDatabase) throws(LinkStoreError) -> PreparedResponse {
        let now = Int64(Posix.unixTime())
        switch job.call {
        case .create:
            guard let config = server.withLock({ $0 })?.config() else {
                throw LinkStoreError.database(SQLiteError(code: 1, message: "the server is not running"))
            }
            switch ShortLinkAPI.creation(body: job.body, config: config) {
            case .failure(let problem):
                return AdminResponses.problem(problem)
            case .success(let creation):
                // A suffix drawn twice is a conflict: draw again (an alias would come from the request body).
                for _ in 0..<8 {
                    let suffix = try database.newSuffix(domain: creation.domain, short: creation.suffix == .short)
                    do throws(LinkStoreError) {
                        let link = try database.create(
                            StoredLink(domain: creation.domain, suffix: suffix, parameters: creation.parameters),
                            now: now
                        )
                        return StandardResponses.json(status: 200, ShortLinkAPI.createdJSON(link))
                    } catch {
                        if case .conflict = error { continue }
                        throw error
                    }
                }
                throw LinkStoreError.database(SQLiteError(code: 5, message: "no free suffix after 8 tries"))
            }
        case .stats(let domain, let suffix, let days):
            guard let link = try database.link(domain: domain, suffix: suffix), link.state != .deleted else {
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
            let first = String(CivilTime(unixSeconds: Int(now) - (days - 1) * 86_400).isoSecond.prefix(10))
            let rows = try database.clicks(domain: link.domain, suffix: link.suffix, from: first).map {
                ShortLinkAPI.ClickRow(day: $0.day, visitor: $0.visitor, outcome: $0.outcome, head: $0.head, count: $0.count)
            }
            return StandardResponses.json(status: 200, ShortLinkAPI.linkStatsJSON(rows))
        case .read(let domain, let suffix):
            guard let link = try database.link(domain: domain, suffix: suffix), link.state != .deleted else {
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
            return StandardResponses.json(status: 200, JSONWriter.string(ShortLinkAPI.linkJSON(link)))
        case .change(let domain, let suffix, let state):
            do throws(LinkStoreError) {
                let link = try database.setState(domain: domain, suffix: suffix, state, now: now)
                return StandardResponses.json(status: 200, JSONWriter.string(ShortLinkAPI.linkJSON(link)))
            } catch {
                guard case .notFound = error else { throw error }
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
        }
    }
}
